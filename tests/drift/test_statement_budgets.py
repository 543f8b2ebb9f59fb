"""What the drift charts add to a write (docs/reference/drift.md, Processing in the write),
counted on the wire as in tests/audit/test_statement_budgets.py: POST /log with 0, 10 and 50
live monitors matching every decision. 10 and 50 cost the same statements: one read of the
monitors, one insert of the points, one update of the monitors, whatever their number; with
none, the write reads no monitor (the chain head counts them)."""

import pytest

from tests.audit.factories import decision_body
from tests.audit.test_statement_budgets import _worst, api, budget  # noqa: F401
from tests.statements import assert_within, counted

pytestmark = pytest.mark.django_db(transaction=True)

# Beyond a write with no monitor: the monitors' read, the points' insert and the monitors'
# update (no alarm: h is out of reach, so no entry, event or alarm is written).
CHARTED = {"statements": 3, "round_trips": 3}


def _monitors(api, count):  # noqa: F811
    for i in range(count):
        body = {"chart": "ai_calibration_up", "scope": "organization", "h": 1000, "name": f"m{i}"}
        assert api.post("/v1/drift-monitors", body, format="json").status_code == 201


@pytest.mark.parametrize("monitors", [0, 10, 50])
def test_post_log_with_monitors_stays_within_its_budget(api, monitors):  # noqa: F811
    _monitors(api, monitors)
    api.post("/v1/log", decision_body(outcome="deny"), format="json")
    counts = []
    for _ in range(4):
        with counted() as count:
            assert api.post("/v1/log", decision_body(outcome="deny"), format="json").status_code == 201
        counts.append(count)
    figures = budget("log")
    if monitors:
        figures = {name: figures[name] + CHARTED[name] for name in figures}
    assert_within(f"POST /log with {monitors} monitors", _worst(counts), **figures)
    if monitors:
        series = api.get("/v1/drift-monitors", {"limit": 1}).json()["data"][0]
        assert series["state"]["points"] == 5


def test_a_customer_whose_monitors_are_paused_or_deleted_reads_no_monitor(api):  # noqa: F811
    _monitors(api, 2)
    paused, deleted = (m["monitor_id"] for m in api.get("/v1/drift-monitors").json()["data"])
    assert api.patch(f"/v1/drift-monitors/{paused}", {"enabled": False}, format="json").status_code == 200
    assert api.delete(f"/v1/drift-monitors/{deleted}").status_code == 204
    api.post("/v1/log", decision_body(outcome="deny"), format="json")
    with counted() as count:
        assert api.post("/v1/log", decision_body(outcome="deny"), format="json").status_code == 201
    assert_within("POST /log with its monitors paused or deleted", count, **budget("log"))
    # enabled again: the next write charts it
    assert api.patch(f"/v1/drift-monitors/{paused}", {"enabled": True}, format="json").status_code == 200
    assert api.post("/v1/log", decision_body(outcome="deny"), format="json").status_code == 201
    assert api.get(f"/v1/drift-monitors/{paused}").json()["state"]["points"] == 1
