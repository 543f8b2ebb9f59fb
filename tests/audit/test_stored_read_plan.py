"""A batch's read of its stored decisions (docs/architecture.md, "The set-wise batch path") visits
each stored decision of its customer at most once, whatever the table's statistics say: on a table
never analysed (autovacuum off, a fresh database) and on one whose statistics make a scan of the
customer's decisions look cheaper than the unique index's probes; in the latter it probes. It
locks what it finds in key order, and replays among new decisions are still found."""

from typing import Any

import pytest
from django.db import connection

from audit.pipeline import _DECISIONS_LOCKED
from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

STORED = 1000


def _batch(api, items):
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert r.status_code == 200, r.content
    return r.json()


@pytest.fixture
def stored(settings) -> str:
    """A customer with STORED decisions `old-0` .. `old-999`; its id."""
    settings.RATE_LIMITS_ENABLED = False
    key = make_key()
    api = client_for(key.value)
    bodies = [decision_body(decision_id=f"old-{n}", user_id=f"u{n % 9}") for n in range(STORED)]
    assert _batch(api, bodies)["accepted"] == STORED
    return key.key.customer_id


def _never_analysed(cursor) -> None:
    """The statistics as a fresh database has them (the test's transaction takes them back): the
    table never analysed nor vacuumed, its indexes as CREATE INDEX left them on an empty table."""
    cursor.execute("DELETE FROM pg_statistic WHERE starelid = 'audit_decision'::regclass")
    cursor.execute("UPDATE pg_class SET relpages = 0, reltuples = -1 WHERE oid = 'audit_decision'::regclass")
    cursor.execute(
        "UPDATE pg_class SET relpages = 1, reltuples = 0 WHERE oid IN "
        "(SELECT indexrelid FROM pg_index WHERE indrelid = 'audit_decision'::regclass)"
    )


def _analysed_as_if_large(cursor) -> None:
    """Analysed, then the statistics scaled to 50 times the rows (the density PostgreSQL reads
    them at): what ANALYZE reports for tens of thousands of one customer's decisions, where
    `decision_id = ANY(ids)` was planned as a sequential scan."""
    cursor.execute("ANALYZE audit_decision")
    cursor.execute(
        "UPDATE pg_class SET reltuples = reltuples * 50 WHERE oid = 'audit_decision'::regclass "
        "OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'audit_decision'::regclass)"
    )


def _read(cursor, customer_id: str, wanted: list[str]) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The read's plan as executed (EXPLAIN ANALYZE, JSON), and its rows."""
    params = ["{" + ",".join(sorted(wanted)) + "}", customer_id]
    cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {_DECISIONS_LOCKED}", params)
    plan = cursor.fetchone()[0]
    plan = plan[0]["Plan"] if isinstance(plan, list) else plan
    cursor.execute(_DECISIONS_LOCKED, params)
    columns = [c.name for c in cursor.description]
    return plan, [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(node for child in plan.get("Plans", []) for node in _nodes(child))]


def _decisions_visited(plan: dict[str, Any]) -> int:
    """The decision rows the plan's scans of the table produced or filtered out, every loop counted
    (EXPLAIN gives both per loop, rounded)."""
    return sum(
        int((node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node["Actual Loops"])
        for node in _nodes(plan)
        if node.get("Relation Name") == "audit_decision"
    )


WANTED = [f"new-{n}" for n in range(1000)] + ["old-5", "old-950", "old-77"]


@pytest.mark.parametrize("statistics", [_never_analysed, _analysed_as_if_large])
def test_the_read_visits_each_stored_decision_at_most_once_whatever_the_statistics(stored, statistics):
    with connection.cursor() as cursor:
        statistics(cursor)
        plan, found = _read(cursor, stored, WANTED)
    assert _decisions_visited(plan) <= STORED + len(WANTED), plan
    assert sorted(row["decision_id"] for row in found) == ["old-5", "old-77", "old-950"]
    assert [row["id"] for row in found] == sorted(row["id"] for row in found)  # locked in key order


def test_where_the_statistics_say_the_customer_is_large_the_unique_index_is_probed(stored):
    with connection.cursor() as cursor:
        _analysed_as_if_large(cursor)
        plan, _ = _read(cursor, stored, WANTED)
    scans = [node for node in _nodes(plan) if node.get("Relation Name") == "audit_decision"]
    assert [node.get("Index Name") for node in scans] == ["audit_decision_id_unique_per_customer"], plan


def test_a_batch_mixing_replays_and_new_decisions_finds_every_replay(settings):
    settings.RATE_LIMITS_ENABLED = False
    api = client_for(make_key().value)
    first = [decision_body(decision_id=f"m-{n}") for n in range(300)]
    assert _batch(api, first)["accepted"] == 300
    again = first[::3] + [decision_body(decision_id=f"n-{n}") for n in range(200)]
    result = _batch(api, again)
    assert (result["replayed"], result["accepted"], result["rejected"]) == (100, 200, 0)
    statuses = {item["decision_id"]: item["status"] for item in result["results"]}
    assert all(statuses[item["decision_id"]] == 200 for item in first[::3])
