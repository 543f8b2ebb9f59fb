"""A format-2 entry's export line assembled in Python, byte for byte the text PostgreSQL's jsonb
gives for it (docs/reference/checkpoints.md, "The export"): the fields of the canonical text
and those shown beside it in one object, keys ordered as jsonb orders them (shorter first, then
by their UTF-8 bytes), `", "` and `": "` between them, each value written as jsonb writes it.

The database sends, per entry, its canonical text with `": "` after each key (`TEXT_SQL`) and
the pieces of the fields shown beside it (`"key": value` without the key's opening quote,
`PIECES_SQL`). That costs the database little; Python only cuts the canonical text into its pairs and puts every piece in place, a
chunk of entries at a time with a few calls that each go over the whole chunk.

A canonical text is RFC 8785 JSON, written compactly with its keys sorted: when it is a flat
object with no backslash, no brace or bracket inside and no number jsonb writes otherwise (an
exponent, a negative zero), its pairs are cut at their commas and kept as they stand, since
jsonb writes the same strings and numbers. Any other text is parsed and written as jsonb writes
it (`jsonb_text`). No Django here: the tests compare both ways with the database's rendering."""

import json
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import lru_cache
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any

from config.jsondoc import JSONValue

# The shown fields' pieces as the database writes them, in this order; the last seven only for
# an entry with a personal part (audit/chain.py, document_from_values).
SHOWN = (
    "hash",
    "canonical",
    "context",
    "user_id",
    "subject_id",
    "subgroups",
    "personal_fields",
    "salt",
    "erased",
)
_PLAIN_SHOWN = 2
WIDTH = 2 + len(SHOWN)  # a row as read: whether it is format 2, its text, its pieces
# The values shown twice (each in its field and again in personal_fields), each written once per
# entry: columns of a subquery that is not merged into the query around it (OFFSET 0), which
# PIECES_SQL reads (audit/export.py).
_SHARED = ("context", "user_id", "subject_id")
SHARED_SQL = ", ".join(
    [f"COALESCE(to_json({name})::text, 'null') AS shown_{name}" for name in _SHARED]
    + ["subgroups::text AS shown_subgroups"]
)
# An entry's text: its canonical text with `": ` after each key (then its pieces, PIECES_SQL).
TEXT_SQL = """replace(canonical, '":', '": ')"""
PIECES_SQL = ", ".join(
    [
        """'hash": ' || to_json(hash)::text""",
        """'canonical": ' || to_json(canonical)::text""",
        """'context": ' || shown_context""",
        """'user_id": ' || shown_user_id""",
        """'subject_id": ' || shown_subject_id""",
        """'subgroups": ' || COALESCE(shown_subgroups, 'null')""",
        """CASE WHEN erased THEN 'personal_fields": null' ELSE 'personal_fields": {"context": '
        || shown_context || ', "user_id": ' || shown_user_id || ', "subgroups": '
        || COALESCE(shown_subgroups, '{}') || ', "subject_id": ' || shown_subject_id || '}' END""",
        """'salt": ' || COALESCE('"' || encode(salt, 'hex') || '"', 'null')""",
        """CASE WHEN erased THEN 'erased": true' ELSE 'erased": false' END""",
    ]
)

# A number jsonb writes otherwise: with an exponent, or a negative zero (written without its sign).
_REWRITTEN_NUMBER = re.compile(r": -?\d[\d.]*[eE]|: -0(?:\.0*)?[,}]")


def _as_is(spaced: str, count: int = 1) -> bool:
    """Whether the `count` spaced canonical texts joined by NUL (which no text column holds)
    may each be a flat object whose pairs can be cut at their commas as they stand: it begins
    with `{"` and ends with `}` and holds no other brace (no nested object), no bracket (no
    array), no backslash (so no quote inside a string), no tab, newline or carriage return (never
    inside a JSON string: whitespace between tokens, which RFC 8785 never writes) and no number
    jsonb writes otherwise. The callers then count the pairs and the spaces: a space anywhere but
    after a key's `": ` (between tokens, or in a string: then the text takes the slow way), a
    string that ends in a comma or begins with a colon, or a key that begins with one (its quote
    would look like a separator) changes one count or the other. Each test is one scan of the
    whole text (one regular expression of them all is slower)."""
    return (
        spaced.startswith('{"')
        and spaced.endswith("}")
        and spaced.count('}\0{"') == count - 1
        and spaced.count("{") == count
        and not any(char in spaced for char in "[\\\t\n\r")
        and _REWRITTEN_NUMBER.search(spaced) is None
    )


def _order(key: str) -> tuple[int, bytes]:
    """jsonb's order of an object's keys: shorter first (in UTF-8 bytes), then bytewise."""
    raw = key.encode("utf-8")
    return len(raw), raw


class Plan:
    """How the pairs of a canonical text with these keys and the shown pieces interleave."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        shown = SHOWN if "personal" in keys else SHOWN[:_PLAIN_SHOWN]
        at = {key: index for index, key in enumerate(keys)}
        at.update({key: len(keys) + 1 + index for index, key in enumerate(shown)})
        self.order = tuple(at[key] for key in sorted(at, key=_order))  # indexes into pairs + [text] + pieces
        self.prefixes = tuple(f'{key}": ' for key in keys)
        # Any: itemgetter's result, a tuple of the pieces in line order
        self.pick: Callable[[list[str]], Any] = itemgetter(*self.order)

    # Any: itemgetter's result, a tuple of the pieces in line order
    @lru_cache(maxsize=4)  # noqa: B019  (a few plans, each kept for the process's life anyway)
    def chunk(self, count: int) -> tuple[tuple[str, ...], Callable[[list[str]], Any]]:
        """For `count` entries of this plan: the prefixes their pairs must have (a NUL piece
        between entries), and the getter of every entry's pieces in line order, one entry after
        the other, from their pairs followed by the rows read."""
        pairs = len(self.keys) + 1
        first_piece = count * pairs - 1
        indexes: list[int] = []
        for entry in range(count):
            for at in self.order:
                if at < len(self.keys):
                    indexes.append(entry * pairs + at)
                else:
                    indexes.append(first_piece + entry * WIDTH + 1 + at - len(self.keys))
        return ((*self.prefixes, "\0") * count)[:-1], itemgetter(*indexes)


_PLANS: dict[tuple[str, ...], Plan] = {}


def _plan_of(pairs: list[str]) -> Plan | None:
    """The plan for pairs cut from a canonical text, or None when a pair is not `key": value`
    (a key given twice included: jsonb keeps only its last value)."""
    keys = tuple(pair[: pair.find('"')] for pair in pairs)
    if len(set(keys)) != len(keys) or any(
        not key or pair[len(key) : len(key) + 3] != '": ' for key, pair in zip(keys, pairs, strict=True)
    ):
        return None
    plan = _PLANS.get(keys)
    if plan is None:
        plan = _PLANS[keys] = Plan(keys)
    return plan


class Renderer:
    """Writes the lines of one export; remembers the last plan (consecutive entries mostly
    share their keys)."""

    def __init__(self) -> None:
        self.last: Plan | None = None

    # Any: the rows read, flattened: a boolean, then texts (None where the database wrote NULL)
    def lines(self, flat: list[Any]) -> str:
        """The lines (each ending in a newline) of the rows read (`WIDTH` values each,
        flattened: whether it is format 2, its text, its pieces), all of format 2."""
        count = len(flat) // WIDTH
        texts = flat[1::WIDTH]
        if None not in texts:
            spaced = "\0".join(texts)
            plan = self.last
            if plan is not None and _as_is(spaced, count):
                prefixes, pick = plan.chunk(count)
                pairs = spaced[2:-1].replace('}\0{"', ',"\0,"').split(',"')
                if (
                    len(pairs) == len(prefixes)
                    and all(map(str.startswith, pairs, prefixes))
                    and spaced.count(" ") == count * len(plan.keys)
                ):
                    each = [iter(pick(pairs + flat))] * len(plan.order)  # one entry's pieces a tuple
                    return '{"' + '}\n{"'.join(map(', "'.join, zip(*each, strict=True))) + "}\n"
        return "".join([self.line(flat[at + 1 : at + WIDTH]) + "\n" for at in range(0, len(flat), WIDTH)])

    def line(self, row: Sequence[str | None]) -> str:
        """One entry's line from its text and pieces, its checks on its own."""
        spaced, pieces = row[0], row[1:]
        if spaced is None:
            return "\\N"  # what COPY wrote for the database's NULL line
        if not _as_is(spaced):
            return jsonb_text(pieces)
        pairs = spaced[2:-1].split(',"')
        plan = self.last
        if (
            plan is None
            or len(plan.prefixes) != len(pairs)
            or not all(map(str.startswith, pairs, plan.prefixes))
        ):
            plan = _plan_of(pairs)
            if plan is None:
                return jsonb_text(pieces)
            self.last = plan
        if spaced.count(" ") != len(plan.keys):
            return jsonb_text(pieces)
        return '{"' + ', "'.join(plan.pick([*pairs, spaced, *pieces])) + "}"  # type: ignore[list-item]  # the database writes every piece


class _Written(str):
    """A value as the database wrote it (a shown piece's)."""


# a JSON value of any shape, numbers as int or Decimal
def _written(value: JSONValue) -> str:
    """A value as jsonb writes it."""
    if isinstance(value, _Written):
        return str.__str__(value)
    if isinstance(value, dict):
        items = sorted(value, key=_order)
        return "{" + ", ".join(f"{encode_basestring(key)}: {_written(value[key])}" for key in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_written(item) for item in value) + "]"
    if isinstance(value, Decimal):  # jsonb's numeric: every digit written, never an exponent or -0
        return format(abs(value) if value.is_zero() else value, "f")
    return json.dumps(value, ensure_ascii=False)  # strings, integers, true, false, null


def jsonb_text(pieces: Sequence[str | None]) -> str:
    """The line as `canonical::jsonb || {hash, canonical} || {the personal part}` writes it,
    for any canonical text (from its `canonical` piece, exactly as stored): parsed (numbers as
    written), merged with the shown pieces, written as jsonb writes."""
    written = {key: _Written(str(piece)[len(key) + 3 :]) for key, piece in zip(SHOWN, pieces, strict=True)}
    document = json.loads(json.loads(written["canonical"]), parse_float=Decimal)
    if not (isinstance(document, dict) and "personal" in document):
        written = {key: written[key] for key in SHOWN[:_PLAIN_SHOWN]}
    if isinstance(document, dict):
        return _written({**document, **written})
    return _written(
        [*(document if isinstance(document, list) else [document]), written]
    )  # jsonb's || of a non-object


def lines_of(rows: Sequence[Sequence[str | None]], renderer: Renderer | None = None) -> list[str]:
    """Each entry's line (no newline) from its text and pieces, one at a time: for the tests."""
    renderer = renderer or Renderer()
    return [renderer.line(row) for row in rows]
