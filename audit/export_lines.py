"""A format-2 entry's export line assembled in Python, byte for byte the text PostgreSQL's jsonb
gives for it (docs/reference/checkpoints.md, "The export"): the fields of the canonical text
and those shown beside it in one object, keys ordered as jsonb orders them (shorter first, then
by their UTF-8 bytes), `", "` and `": "` between them, each value written as jsonb writes it.

The database sends, per entry, one text (`TEXT_SQL`): its canonical text with `": "` after each
key, then the pieces of the fields shown beside it (`"key": value` without the key's opening
quote), separated by U+0001, which no piece holds (JSON escapes it). That costs the database
little; Python only cuts the canonical text into its pairs and puts every piece in place, a
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
from typing import Any, cast

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
_WIDTH = 1 + len(SHOWN)  # the spaced canonical text and the pieces
_STRING = "COALESCE(to_json({})::text, 'null')"
TEXT_SQL = (
    "CASE WHEN canonical IS NULL THEN NULL ELSE concat_ws(chr(1), "
    + ", ".join(
        [
            """replace(canonical, '":', '": ')""",
            """'hash": ' || to_json(hash)::text""",
            """'canonical": ' || to_json(canonical)::text""",
            f"""'context": ' || {_STRING.format("context")}""",
            f"""'user_id": ' || {_STRING.format("user_id")}""",
            f"""'subject_id": ' || {_STRING.format("subject_id")}""",
            """'subgroups": ' || COALESCE(subgroups::text, 'null')""",
            f"""CASE WHEN erased THEN 'personal_fields": null' ELSE 'personal_fields": {{"context": '
            || {_STRING.format("context")} || ', "user_id": ' || {_STRING.format("user_id")}
            || ', "subgroups": ' || COALESCE(subgroups::text, '{{}}') || ', "subject_id": '
            || {_STRING.format("subject_id")} || '}}' END""",
            """'salt": ' || COALESCE('"' || encode(salt, 'hex') || '"', 'null')""",
            """CASE WHEN erased THEN 'erased": true' ELSE 'erased": false' END""",
        ]
    )
    + ") END"
)

# A number jsonb writes otherwise: with an exponent, or a negative zero (written without its sign).
_REWRITTEN_NUMBER = re.compile(r": -?\d[\d.]*[eE]|: -0(?:\.0*)?[,}]")
# Whitespace between the tokens (RFC 8785 writes none): a tab, newline or carriage return is
# never inside a JSON string; a space before a comma or brace, or after a key's `": `, may be
# inside one (then the text is only taken the slow way).
_SPACES = ("\t", "\n", "\r", " ,", " }", '":  ')


def _as_is(spaced: str, count: int = 1) -> bool:
    """Whether the `count` spaced canonical texts joined by NUL (which no text column holds)
    are each a flat object whose pairs can be cut at their commas as they stand: it begins with
    `{"` and ends with `}` and holds no other brace (no nested object), no bracket (no array) and
    no backslash (so no quote inside a string), and no number jsonb writes otherwise. A string
    that ends in a comma or begins with a colon, and a key that begins with one, would make a
    quote look like a separator: the callers catch those by counting the pieces and the `": `.
    Each test is one scan of the whole text (one regular expression of them all is slower)."""
    return (
        spaced.startswith('{"')
        and spaced.endswith("}")
        and spaced.count('}\0{"') == count - 1
        and spaced.count("{") == count
        and spaced.count("}") == count
        and "[" not in spaced
        and "\\" not in spaced
        and not any(space in spaced for space in _SPACES)
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
        between entries), and the getter of every entry's pieces in line order, NUL between
        entries, from their pairs followed by the chunk's texts and pieces."""
        pairs = len(self.keys) + 1
        first_piece = count * pairs - 1
        indexes: list[int] = []
        for entry in range(count):
            for at in self.order:
                if at < len(self.keys):
                    indexes.append(entry * pairs + at)
                else:
                    indexes.append(first_piece + entry * _WIDTH + at - len(self.keys))
            indexes.append(
                entry * pairs + len(self.keys)
            )  # the NUL piece (the last one's is the first text: unused)
        indexes.pop()
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

    def text(self, values: list[str | None]) -> str:
        """The lines (each ending in a newline) of entries whose TEXT_SQL values these are."""
        if None in values:
            return "".join([("\\N" if value is None else self.line(value)) + "\n" for value in values])
        texts = cast(list[str], values)  # no None: checked above
        count = len(texts)
        parts = "\1".join(texts).split("\1")
        if len(parts) == count * _WIDTH:
            spaced = "\0".join(parts[::_WIDTH])
            plan = self.last
            if plan is not None and _as_is(spaced, count):
                prefixes, pick = plan.chunk(count)
                pairs = spaced[2:-1].replace('}\0{"', ',"\0,"').split(',"')
                if (
                    len(pairs) == len(prefixes)
                    and all(map(str.startswith, pairs, prefixes))
                    and spaced.count('": ') == count * len(plan.keys)
                ):
                    return ('{"' + ', "'.join(pick(pairs + parts)) + "}\n").replace(', "\0, "', '}\n{"')
        return "".join([self.line(text) + "\n" for text in texts])

    def line(self, value: str) -> str:
        """One entry's line, its checks on its own."""
        spaced, *pieces = value.split("\1")
        if len(pieces) != len(SHOWN) or not _as_is(spaced):
            return jsonb_text(value)
        pairs = spaced[2:-1].split(',"')
        plan = self.last
        if (
            plan is None
            or len(plan.prefixes) != len(pairs)
            or not all(map(str.startswith, pairs, plan.prefixes))
        ):
            plan = _plan_of(pairs)
            if plan is None or spaced.count('": ') != len(plan.keys):
                return jsonb_text(value)
            self.last = plan
        elif spaced.count('": ') != len(plan.keys):
            return jsonb_text(value)
        return '{"' + ', "'.join(plan.pick([*pairs, spaced, *pieces])) + "}"


class _Written(str):
    """A value as the database wrote it (a shown piece's)."""


# Any: a JSON value of any shape, numbers as int or Decimal
def _written(value: Any) -> str:
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


def jsonb_text(value: str) -> str:
    """The line as `canonical::jsonb || {hash, canonical} || {the personal part}` writes it,
    for any canonical text (from its `canonical` piece, exactly as stored): parsed (numbers as
    written), merged with the shown pieces, written as jsonb writes."""
    pieces = value.split("\1")[1:]
    written = {key: _Written(piece[len(key) + 3 :]) for key, piece in zip(SHOWN, pieces, strict=True)}
    document = json.loads(json.loads(written["canonical"]), parse_float=Decimal)
    if not (isinstance(document, dict) and "personal" in document):
        written = {key: written[key] for key in SHOWN[:_PLAIN_SHOWN]}
    if isinstance(document, dict):
        return _written({**document, **written})
    return _written(
        [*(document if isinstance(document, list) else [document]), written]
    )  # jsonb's || of a non-object


def lines_of(values: Sequence[str], renderer: Renderer | None = None) -> list[str]:
    """Each entry's line (no newline), one at a time: for the tests."""
    renderer = renderer or Renderer()
    return [renderer.line(value) for value in values]
