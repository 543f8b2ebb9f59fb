"""A large batch on PostgreSQL (docs/architecture.md, "The set-wise batch path"): its set-wise
upserts are sent together in pipeline mode and its entries are sealed while the server runs
them, before the chain head is locked; the batch's chain still verifies and its figures are
those of the same calls one by one (tests/audit/test_log_batch.py, both appliers)."""

import pytest
from django.db import connection

import audit.apply
from tests.audit.factories import all_entries, decision_body, recompute_hash
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_large_batch_seals_its_entries_while_its_upserts_run(monkeypatch, settings):
    settings.RATE_LIMITS_ENABLED = False
    seen: dict[str, object] = {}
    send, seal = audit.apply.held_send, audit.apply.entries_seal

    def held_send(held):
        seen["held"] = [sql.split(" AS t ")[0].split("INSERT INTO ")[1] for sql, _ in held]
        return send(held)

    def entries_seal(entries):
        seen.setdefault("sealed", (len(entries), connection.connection.pgconn.pipeline_status))
        return seal(entries)

    monkeypatch.setattr(audit.apply, "held_send", held_send)
    monkeypatch.setattr(audit.apply, "entries_seal", entries_seal)
    api = client_for(make_key().value)
    items = [decision_body(user_id=f"user-{n % 7}", subgroups={"gender": "fm"[n % 2]}) for n in range(120)]
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert r.status_code == 200 and r.json()["accepted"] == 120, r.content
    assert seen["held"] == ['"calibration_userdailyaggregate"', '"bias_subgroupdailystat"']
    count, pipeline_status = seen["sealed"]  # type: ignore[misc]
    assert count == 120 and pipeline_status  # sealed inside the upserts' pipeline
    entries = all_entries(api)
    assert [e["sequence"] for e in entries] == list(range(1, 121))
    assert all(e["hash"] == recompute_hash(e) for e in entries)
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
