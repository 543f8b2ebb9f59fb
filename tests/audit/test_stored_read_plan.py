"""A batch's read of its stored decisions (docs/architecture.md, "The set-wise batch path") looks
each id up in the decisions' unique index, whatever the table's statistics make a scan look like,
and locks what it finds in key order; replays among new decisions are still found."""

import pytest
from django.db import connection

from audit.pipeline import _DECISIONS_LOCKED
from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]


def _batch(api, items):
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert r.status_code == 200, r.content
    return r.json()


def test_the_stored_decisions_are_probed_in_the_index_not_scanned(settings):
    settings.RATE_LIMITS_ENABLED = False
    key = make_key()
    api = client_for(key.value)
    stored = [decision_body(decision_id=f"old-{n}", user_id=f"u{n % 9}") for n in range(2000)]
    for start in range(0, len(stored), 1000):
        assert _batch(api, stored[start : start + 1000])["accepted"] == 1000
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE audit_decision")
        wanted = [f"new-{n}" for n in range(1000)] + ["old-5", "old-1500", "old-77"]
        cursor.execute(
            f"EXPLAIN {_DECISIONS_LOCKED}", ["{" + ",".join(sorted(wanted)) + "}", key.key.customer_id]
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "Seq Scan" not in plan, plan
        assert "audit_decision_id_unique_per_customer" in plan, plan
        cursor.execute(_DECISIONS_LOCKED, ["{" + ",".join(sorted(wanted)) + "}", key.key.customer_id])
        columns = [c.name for c in cursor.description]
        found = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    assert sorted(row["decision_id"] for row in found) == ["old-1500", "old-5", "old-77"]
    assert [row["id"] for row in found] == sorted(row["id"] for row in found)  # locked in key order


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
