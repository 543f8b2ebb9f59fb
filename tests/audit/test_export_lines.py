"""The export's format-2 lines, written in Python (audit/export_lines.py), are byte for byte the
lines the database's jsonb writes (docs/reference/checkpoints.md, "The export"): whatever the
canonical text holds (escapes, nesting, numbers jsonb writes otherwise, keys of any script), an
erased entry, an entry with no personal part, and the export of a whole chain."""

import json
from typing import Any

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.export import _FORMAT2, _LINE
from audit.export_lines import PIECES_SQL, SHARED_SQL, TEXT_SQL, Renderer, jsonb_text, lines_of
from audit.hashing import jcs
from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key

HASH = "ab" * 32
SALT = "5a" * 32
DECISION = {
    "ai_confidence": 0.758,
    "ai_recommendation": "deny",
    "calibration_category": "CALIBRATED",
    "decision_id": "c1m-0",
    "entry_id": "aud_01m8btqp21hv515sz1j16wt971",
    "followed_ai": True,
    "format": 2,
    "logged_at": "2026-11-26T11:44:27.519Z",
    "model_id": "model-0",
    "model_version": "1",
    "outcome": None,
    "personal": "52" * 32,
    "previous_hash": "0" * 64,
    "sequence": 1,
    "timestamp": "2026-08-29T11:44:27.000Z",
    "type": "decision",
    "user_decision": "deny",
}
PERSONAL = {
    "context": 'case 1: "file"\n\\ reviewed',
    "subgroups": '{"gender": "f"}',
    "subject_id": "s-1",
    "user_id": "u-1",
}

# (canonical text, the columns shown beside it): context, subgroups as jsonb writes it, subject_id,
# user_id, salt in hex, erased.
Row = tuple[str, str | None, str | None, str | None, str | None, str | None, bool]


def _row(canonical: str, *, erased: bool = False, **personal: Any) -> Row:
    fields = {**PERSONAL, **personal}
    if erased:
        return (canonical, None, None, None, None, None, True)
    return (
        canonical,
        fields["context"],
        fields["subgroups"],
        fields["subject_id"],
        fields["user_id"],
        SALT,
        False,
    )


CASES: list[Row] = [
    _row(jcs(DECISION)),
    _row(jcs(DECISION), erased=True),
    _row(jcs(DECISION), subgroups=None),
    _row(jcs(DECISION), subgroups="{}", context=None, user_id="ünï ✓\u2028"),
    _row(jcs(DECISION), subgroups='{"a": [1, 2.50], "custom": {"région": "Île"}, "gender": "f"}'),
    _row(jcs({**DECISION, "ai_confidence": 1e-7})),  # RFC 8785 writes 1e-7, jsonb 0.0000001
    _row(jcs({**DECISION, "ai_confidence": 0.00005})),
    _row(jcs({**DECISION, "ai_confidence": 1e21, "sequence": 2**53 - 1})),
    _row(jcs({**DECISION, "ai_confidence": 1.0, "outcome": -3})),
    _row(jcs({**DECISION, "model_id": 'say "hi"\\ \t\x01\x7f \u2028 ✓ 🎉'})),
    _row(jcs({**DECISION, "model_id": "ends in a comma,", "decision_id": ":begins with a colon"})),
    _row(jcs({**DECISION, "model_id": "{braces} [brackets]", "model_version": "a,b:c"})),
    _row(jcs({**DECISION, "probe": {"kind": "known", "b": [1, {"é": 2, "z": None}], "aa": {}, "c": []}})),
    _row(jcs({**DECISION, "é": 1, "z": 2, "ab": 3, "": 4})),
    _row(jcs({"format": 2, "type": "erasure", "sequence": 7, "previous_hash": "1" * 64, "entries": 3})),
    _row('{"a":-0.0,"b":-0,"c":1.50,"personal":"p"}'),  # not RFC 8785 (only a database edit makes one)
    _row('{"a":1,"a":2,"personal":"p"}'),  # a key twice: jsonb keeps the last
    _row('{":k":1,"personal":"p"}'),
    _row('{"a":1 ,"b":"x" ,"c":true }'),  # whitespace between tokens, which RFC 8785 never writes
    _row('{"a": 1,"b":\t2,"personal":"p"}'),
    _row('{"a":"x,","b":"y:","personal":"p"}'),
    _row('{"a":"x\\":1","personal":"p"}'),
]


Read = tuple[str | None, ...]  # what the export reads of a format-2 entry: its text and pieces


def _by_database(rows: list[Row]) -> list[tuple[str, Read]]:
    """The database's own line for each row (`_FORMAT2`, as the export rendered it before), and
    what the export now reads for it (TEXT_SQL, PIECES_SQL)."""
    out = []
    with connection.cursor() as cursor:
        for canonical, context, subgroups, subject_id, user_id, salt, erased in rows:
            cursor.execute(
                f"SELECT {_FORMAT2}, {TEXT_SQL}, {PIECES_SQL} FROM (SELECT *, {SHARED_SQL} FROM (SELECT "  # noqa: S608
                "%s::text AS canonical, %s::text AS hash, %s::text AS context, %s::jsonb AS subgroups, "
                "%s::text AS subject_id, %s::text AS user_id, decode(%s, 'hex') AS salt, %s::bool AS erased"
                ") AS raw OFFSET 0) AS entry",
                [canonical, HASH, context, subgroups, subject_id, user_id, salt, erased],
            )
            line, *read = cursor.fetchone()
            out.append((line, tuple(read)))
    return out


def _read(row: Row) -> Read:
    """What the export reads for a row (TEXT_SQL, PIECES_SQL), written here: the same text and
    pieces for the tests that run on every backend."""
    canonical, context, subgroups, subject_id, user_id, salt, erased = row
    c, u, s = (
        ("null" if v is None else json.dumps(v, ensure_ascii=False)) for v in (context, user_id, subject_id)
    )
    personal = (
        "null"
        if erased
        else f'{{"context": {c}, "user_id": {u}, "subgroups": {subgroups or "{}"}, "subject_id": {s}}}'
    )
    return (
        canonical.replace('":', '": '),
        f'hash": "{HASH}"',
        'canonical": ' + json.dumps(canonical, ensure_ascii=False),
        f'context": {c}',
        f'user_id": {u}',
        f'subject_id": {s}',
        f'subgroups": {"null" if subgroups is None else subgroups}',
        f'personal_fields": {personal}',
        'salt": ' + ("null" if salt is None else f'"{salt}"'),
        f'erased": {"true" if erased else "false"}',
    )


def _flat(reads: list[Read]) -> list[str | bool | None]:
    """Rows as the export flattens a FETCH of format-2 entries."""
    return [value for read in reads for value in (True, *read)]


def _check(pairs: list[tuple[str, Read]]) -> None:
    """Each entry's line, one at a time and a chunk at a time, is the database's line."""
    expected = [line for line, _ in pairs]
    reads = [read for _, read in pairs]
    renderer = Renderer()  # one renderer over all of them: its remembered plan changes between them
    assert lines_of(reads, renderer) == expected
    for _ in range(2):  # the first chunk remembers a plan, the second may then go a chunk at a time
        assert renderer.lines(_flat(reads)) == "".join(line + "\n" for line in expected)
        assert renderer.lines(_flat(reads * 3)) == "".join(line + "\n" for line in expected) * 3
    for line, read in pairs:
        assert jsonb_text(read[1:]) == line, read[0]  # the parsing path alone


@pytest.mark.django_db
@pytest.mark.postgres
def test_every_case_is_the_line_the_database_writes():
    pairs = _by_database(CASES)
    _check(pairs)
    assert [read for _, read in pairs] == [
        _read(row) for row in CASES
    ]  # as the tests on every backend write them
    _check([pairs[0]] * 5)  # entries that share their keys: a chunk at a time
    null = (None, *pairs[0][1][1:])  # a NULL canonical text: the line is what COPY wrote for it
    assert Renderer().lines(_flat([null, pairs[0][1]])) == "\\N\n" + pairs[0][0] + "\n"


def test_a_decision_line_as_jsonb_writes_it():
    """The common line, on every backend: jsonb's key order (shorter first) and spacing."""
    line = Renderer().line(_read(_row('{"format":2,"personal":"p","sequence":3,"type":"decision"}')))
    assert line == (
        '{"hash": "' + HASH + '", "salt": "' + SALT + '", "type": "decision", "erased": false, '
        '"format": 2, "context": "case 1: \\"file\\"\\n\\\\ reviewed", "user_id": "u-1", '
        '"personal": "p", "sequence": 3, "canonical": "{\\"format\\":2,\\"personal\\":\\"p\\",'
        '\\"sequence\\":3,\\"type\\":\\"decision\\"}", "subgroups": {"gender": "f"}, '
        '"subject_id": "s-1", "personal_fields": {"context": "case 1: \\"file\\"\\n\\\\ reviewed", '
        '"user_id": "u-1", "subgroups": {"gender": "f"}, "subject_id": "s-1"}}'
    )
    parsed = json.loads(line)
    assert parsed["canonical"] == '{"format":2,"personal":"p","sequence":3,"type":"decision"}'


def test_numbers_jsonb_writes_otherwise_are_written_as_jsonb_does():
    line = Renderer().line(
        _read(_row('{"a":1e-7,"b":1.5E+3,"c":-0.0,"d":0.00005,"personal":"p"}', erased=True))
    )
    assert line.startswith('{"a": 0.0000001, "b": 1500, "c": 0.0, "d": 0.00005, "hash": ')


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=1 - 2**53, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
)
_KEYS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.django_db
@pytest.mark.postgres
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(_KEYS, _VALUES, max_size=5), min_size=1, max_size=4), st.booleans())
def test_any_canonical_text_is_the_line_the_database_writes(objects, erased):
    rows = [
        _row(jcs({**obj, "personal": "p"} if i % 2 else obj), erased=erased) for i, obj in enumerate(objects)
    ]
    _check(_by_database(rows))


@pytest.mark.django_db
@pytest.mark.postgres
def test_the_export_of_a_chain_is_the_database_rendering_byte_for_byte():
    api = client_for(make_key().value)
    odd = [
        decision_body(
            ai_confidence=1.0,
            context='say "hi"\nthen \\ leave',
            subgroups={"gender": "f", "custom": {"région": "Île"}},
        ),
        decision_body(ai_confidence=0.0, context="tab\there \u2028 ünïcode ✓", model_id="ends in a comma,"),
        decision_body(ai_confidence=1e-05),
        decision_body(ai_confidence=None, model_id=None, subgroups={}),
        decision_body(ai_confidence=0.123456789012345, user_id=":colon"),
    ]
    assert api.post("/v1/log/batch", {"decisions": odd}, format="json").json()["rejected"] == 0
    first = api.get("/v1/audit-trail").json()["data"][0]
    assert api.post(
        "/v1/log", {"decision_id": first["decision_id"], "outcome": "approve"}, format="json"
    ).status_code in (200, 201)
    exported = b"".join(api.get("/v1/audit-trail/export").streaming_content)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_LINE} FROM audit_auditentry WHERE customer_id = %s ORDER BY sequence",  # noqa: S608
            ["acme"],
        )
        expected = "".join(line + "\n" for (line,) in cursor.fetchall()).encode()
    assert exported == expected and exported.count(b"\n") == 6
