"""The hash chain (docs/reference/decisions.md, "The audit trail"; docs/reference/erasure.md,
"Entry format 2"): an entry's document (exactly what GET /audit-trail shows), its canonical
text and its hash (audit/hashing.py, which the offline verifier shares).

Every entry appended now is format 2, sealed by the one function every appender calls,
`entry_seal` (or `entries_seal` for many): it fixes the entry's clear fields and its salted
commitment to the personal ones and renders its canonical text around the two link values
(previous_hash and sequence), so that `link` (in Python) or the single-append statement (in
SQL) only splices those in and hashes. Format-1 entries (older) are shown and verified from
their columns as before."""

import datetime as dt
import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, cast

from audit.fields import ENTRY_DOCUMENT_FIELDS, ENTRY_NEW_FIELDS, ENTRY_OPTIONAL_FIELDS
from audit.hashing import (
    PERSONAL_FIELDS,
    SALT_BYTES,
    canonical_hash,
    commitment,
    jcs,
)
from config.jsondoc import JSONObject, JSONValue
from config.timeutils import isoformat

if TYPE_CHECKING:
    from audit.models import AuditEntry

# AuditEntry columns, in ENTRY_DOCUMENT_FIELDS order (the decision id is stored as decision_ref),
# then those of format 2.
FORMAT1_COLUMNS = [
    {"entry_id": "id", "decision_id": "decision_ref"}.get(name, name) for name in ENTRY_DOCUMENT_FIELDS
]
FORMAT2_COLUMNS = ["format", "canonical", "salt", "erased"]
ENTRY_COLUMNS = [*FORMAT1_COLUMNS, *FORMAT2_COLUMNS]
_WIDTH = len(FORMAT1_COLUMNS)
_AT = {name: at for at, name in enumerate(ENTRY_DOCUMENT_FIELDS)}
_SHOWN_WHEN_SET = [*ENTRY_OPTIONAL_FIELDS, *ENTRY_NEW_FIELDS]


# An entry's document or fields by name: JSON values of several types, from the entry's columns
# (each column's value as the model or the database gives it).
type Fields = dict[str, object]


def _format1(values: Sequence[object]) -> Fields:
    doc = dict(zip(ENTRY_DOCUMENT_FIELDS, values, strict=True))
    # Shown (and hashed) only when the decision has it; a field of ENTRY_NEW_FIELDS, which no
    # format-1 entry hashed, is null in its column.
    for name in _SHOWN_WHEN_SET:
        if doc[name] is None:
            del doc[name]
    doc["timestamp"] = isoformat(cast(dt.datetime, doc["timestamp"]))  # DateTimeField columns
    doc["logged_at"] = isoformat(cast(dt.datetime, doc["logged_at"]))
    if doc["subgroups"] is None:
        doc["subgroups"] = {}
    return doc


def document_from_values(values: Sequence[JSONValue]) -> JSONObject:
    """An entry's document (what GET /audit-trail and the export show) from its columns
    (ENTRY_COLUMNS order). Format 2: the fields of its canonical text as written, its personal
    fields and salt (null once erased), `canonical` itself and its hash; never a re-rendering."""
    version, canonical, salt, erased = values[_WIDTH:]
    if version != 2:
        return _format1(values[:_WIDTH])
    doc: Fields = json.loads(canonical)
    if "personal" in doc:  # a decision's entry: its personal fields beside the canonical ones
        personal = None if erased else {name: values[_AT[name]] for name in PERSONAL_FIELDS}
        if personal is not None:
            personal["subgroups"] = personal["subgroups"] or {}
        for name in PERSONAL_FIELDS:
            doc[name] = None if personal is None else personal[name]
        doc["personal_fields"] = personal
        doc["salt"] = None if salt is None else bytes(salt).hex()
        doc["erased"] = bool(erased)
    doc["hash"] = values[_AT["hash"]]
    doc["canonical"] = canonical
    return doc


def entry_document(entry: "AuditEntry") -> Fields:
    return document_from_values([getattr(entry, column) for column in ENTRY_COLUMNS])


def personal_fields(entry: "AuditEntry") -> Fields:
    """The personal fields of a decision's entry, as its commitment covers them."""
    return {
        "context": entry.context,
        "subgroups": entry.subgroups or {},
        "subject_id": entry.subject_id,
        "user_id": entry.user_id,
    }


def clear_fields_from_values(values: Sequence[object]) -> Fields:
    """The fields of a decision's (or outcome's) entry that are not personal, from its columns
    (FORMAT1_COLUMNS first), as format 1 showed them (a field shown only when set is left out
    when it is not)."""
    doc = _format1(values[:_WIDTH])
    for name in (*PERSONAL_FIELDS, "hash"):
        doc.pop(name, None)
    return doc


def clear_fields(entry: "AuditEntry") -> Fields:
    row = entry.__dict__  # a model instance holds its loaded columns here: no lookup per column
    return clear_fields_from_values([row[c] if c in row else getattr(entry, c) for c in FORMAT1_COLUMNS])


class Template(NamedTuple):
    """An entry's canonical text around its two link values:
    canonical = head + <previous_hash> + middle + <sequence> + tail. (A tuple: a batch builds
    one per entry, and a frozen dataclass's __init__ cost several times a tuple's.)"""

    head: str
    middle: str
    tail: str

    def link(self, previous_hash: str, sequence: int) -> tuple[str, str]:
        """(canonical text, hash) of the entry at `sequence` after `previous_hash`."""
        canonical = f"{self.head}{previous_hash}{self.middle}{sequence}{self.tail}"
        return canonical, canonical_hash(canonical)


_PREVIOUS = '"previous_hash":"'
_SEQUENCE = '"sequence":'


def _template(text: str) -> Template:
    """Split a canonical text rendered with previous_hash "" and sequence 0 at the two link
    values, found by their first occurrence: every key sorted before them holds a scalar or the
    commitment (a key of the same name nested in an object comes later or is escaped text), and
    inside a JSON string a quote is always escaped, so no string value can hold
    `"previous_hash":"` or `"sequence":`."""
    at = text.index(_PREVIOUS) + len(_PREVIOUS)
    seq = text.index(_SEQUENCE + "0", at) + len(_SEQUENCE)
    return Template(text[:at], text[at:seq], text[seq + 1 :])


def entry_seal(
    entry: "AuditEntry",
    clear: Mapping[str, object] | None = None,
    *,
    salt: bytes | None = None,
    times: dict[dt.datetime, str] | None = None,
    personal: Fields | None = None,
) -> Template:
    """Make the (unsaved) entry a format-2 entry and return its template; the one way any
    entry is appended (audit.plan.link and the single-append statement splice the links in).

    A decision's or outcome's entry takes its clear fields from its columns and gets a new
    random salt and the commitment to its personal fields. Any other entry (an erasure) passes
    `clear`, the fields it shows, none of them personal: it has no `personal` unless it passes
    `personal` too, its personal fields (a drift entry naming a reviewer). `salt`: the
    decision's or outcome's new random salt when the caller drew it (entries_seal), and
    `times` the timestamps its other entries already wrote."""
    entry.format = 2
    doc: Fields
    if clear is None:
        entry.salt = drawn = salt or os.urandom(SALT_BYTES)
        doc = _sealed_fields(entry, drawn, {} if times is None else times)
    elif personal is None:
        entry.salt = None
        doc = dict(clear)
    else:
        entry.salt = drawn = salt or os.urandom(SALT_BYTES)
        doc = dict(clear, personal=commitment(drawn, personal))
    doc.update(format=2, previous_hash="", sequence=0)
    template = _template(jcs(doc))
    entry._template = template  # read by link() and the single-append statement
    return template


def entries_seal(entries: Sequence["AuditEntry"]) -> list[Template]:
    """entry_seal over many decision or outcome entries (a batch, a set-wise append); their
    salts drawn from the system's random source at once (one read, not one per entry)."""
    pool = os.urandom(SALT_BYTES * len(entries))
    times: dict[dt.datetime, str] = {}  # a batch's entries share their logged_at, most their timestamp
    return [
        entry._template
        if getattr(entry, "_template", None)
        else entry_seal(entry, salt=pool[at * SALT_BYTES : (at + 1) * SALT_BYTES], times=times)
        for at, entry in enumerate(entries)
    ]


# The columns of a decision's or outcome's entry that its canonical text shows in clear, by the
# name it shows them under: those always shown (ENTRY_NEW_FIELDS among them: null when unset),
# those shown only when set (the personal fields, the hash and the two link values aside, which
# the caller or the commitment supply).
_LINKS = ("hash", "previous_hash", "sequence")
_CLEAR = [
    (name, column)
    for name, column in zip(ENTRY_DOCUMENT_FIELDS, FORMAT1_COLUMNS, strict=True)
    if name not in PERSONAL_FIELDS and name not in _LINKS and name not in ENTRY_OPTIONAL_FIELDS
]
_CLEAR_WHEN_SET = [
    (name, column)
    for name, column in zip(ENTRY_DOCUMENT_FIELDS, FORMAT1_COLUMNS, strict=True)
    if name not in PERSONAL_FIELDS and name not in _LINKS and name in ENTRY_OPTIONAL_FIELDS
]
_COLUMNS = frozenset([*FORMAT1_COLUMNS, *PERSONAL_FIELDS])


def _sealed_fields(entry: "AuditEntry", salt: bytes, times: dict[dt.datetime, str]) -> Fields:
    """A decision's or outcome's entry's clear fields (clear_fields, without the link values)
    and `personal`, its commitment with `salt` (the entry's), read from the instance's columns in one
    pass; `times`: the timestamps already written, by value (shared by a batch's entries)."""
    row = entry.__dict__  # an unsaved entry holds every column here: no lookup per column
    if not row.keys() >= _COLUMNS:  # a row loaded with deferred fields
        doc = clear_fields(entry)
        del doc["previous_hash"], doc["sequence"]
        for name in ENTRY_NEW_FIELDS:  # a new entry holds them, null or not
            doc[name] = getattr(entry, name)
        doc["personal"] = commitment(salt, personal_fields(entry))
        return doc
    fields = {name: row[column] for name, column in _CLEAR}  # the columns' values as the model holds them
    for name, column in _CLEAR_WHEN_SET:
        value = row[column]
        if value is not None:
            fields[name] = value
    for name in ("timestamp", "logged_at"):
        value = fields[name]
        text = times.get(value)
        if text is None:
            text = times[value] = isoformat(value)
        fields[name] = text
    personal = {name: row[name] for name in PERSONAL_FIELDS}
    personal["subgroups"] = personal["subgroups"] or {}
    fields["personal"] = commitment(salt, personal)
    return fields


__all__ = ["entries_seal", "entry_seal"]
