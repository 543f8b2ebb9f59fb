"""The hash chain (docs/reference/decisions.md, The audit trail): an entry's document (exactly
what GET /audit-trail shows), its canonical JSON and its hash (audit/hashing.py, which the
offline verifier shares). Anyone holding an export can recompute the chain with these rules."""

from typing import Any

from audit.fields import ENTRY_DOCUMENT_FIELDS, ENTRY_OPTIONAL_FIELDS
from audit.hashing import canonical_json, entry_hash
from config.timeutils import isoformat

# AuditEntry columns, in ENTRY_DOCUMENT_FIELDS order (the decision id is stored as decision_ref).
ENTRY_COLUMNS = [
    {"entry_id": "id", "decision_id": "decision_ref"}.get(name, name) for name in ENTRY_DOCUMENT_FIELDS
]


def document_from_values(values: tuple | list) -> dict[str, Any]:
    """An entry's document from its columns (ENTRY_COLUMNS order)."""
    doc = dict(zip(ENTRY_DOCUMENT_FIELDS, values, strict=True))
    for name in ENTRY_OPTIONAL_FIELDS:  # shown (and hashed) only when the decision has it
        if doc[name] is None:
            del doc[name]
    doc["timestamp"] = isoformat(doc["timestamp"])
    doc["logged_at"] = isoformat(doc["logged_at"])
    if doc["subgroups"] is None:
        doc["subgroups"] = {}
    return doc


def entry_document(entry: Any) -> dict[str, Any]:
    return document_from_values([getattr(entry, column) for column in ENTRY_COLUMNS])


_PREVIOUS = '"previous_hash":"'
_SEQUENCE = '"sequence":'


def canonical_template(doc: dict[str, Any]) -> tuple[str, str, str]:
    """The canonical JSON of an entry around its two link values, for hashing in SQL:
    canonical = head + <previous_hash> + middle + <sequence> + tail. Found by their first
    occurrence: every key sorted before them holds a scalar (a key of the same name nested
    in subgroups comes later), and inside a JSON string a quote is always escaped, so no
    string value can hold `"previous_hash":"` or `"sequence":`."""
    body = {k: v for k, v in doc.items() if k != "hash"}
    text = canonical_json({**body, "previous_hash": "", "sequence": 0})
    at = text.index(_PREVIOUS) + len(_PREVIOUS)
    seq = text.index(_SEQUENCE + "0", at) + len(_SEQUENCE)
    return text[:at], text[at:seq], text[seq + 1 :]


__all__ = ["canonical_json", "entry_hash"]
