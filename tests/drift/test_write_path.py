"""The charts in the write (docs/reference/drift.md, Processing in the write): a batch has the
effects of the same calls one by one, replays and later outcomes are no points, the events reach
a real webhook receiver, and an erased reviewer's monitors are re-keyed and paused."""

import json

import pytest
from standardwebhooks import Webhook as Verifier

from audit.hashing import commitment
from audit.models import AuditEntry
from tests.audit.erasure_helpers import erase
from tests.drift.test_api import log
from tests.webhooks.helpers import webhook
from webhooks import dispatch

pytestmark = pytest.mark.django_db(transaction=True)

MONITOR = {"chart": "ai_calibration_up", "scope": "organization", "h": 2}


def _series(api, mid):
    return [
        {k: v for k, v in p.items() if k not in ("sequence", "alarm_id", "timestamp")}
        for p in api.get(f"/v1/drift-monitors/{mid}/series").json()["data"]
    ]


def _items():
    # the AI wrong at confidence 0.9 again and again: the chart climbs ln 2 - ln 1.1 per point
    return [log(None, f"w-{i}", c=0.9, followed=True, outcome="deny") for i in range(12)]


def test_a_batch_has_the_effects_of_the_same_calls_one_by_one(api, other_api):
    one = api.post("/v1/drift-monitors", MONITOR, format="json").json()["monitor_id"]
    for item in _items():
        assert api.post("/v1/log", item, format="json").status_code == 201
    many = other_api.post("/v1/drift-monitors", MONITOR, format="json").json()["monitor_id"]
    assert other_api.post("/v1/log/batch", {"decisions": _items()}, format="json").status_code in (
        200,
        201,
        207,
    )
    assert _series(api, one) == _series(other_api, many)
    singles = [(a["point_index"], a["signals"]) for a in api.get("/v1/drift-alarms").json()["data"]]
    batched = [(a["point_index"], a["signals"]) for a in other_api.get("/v1/drift-alarms").json()["data"]]
    assert singles == batched and singles
    # a replayed batch appends nothing and changes no chart
    before = api.get("/v1/audit-trail").json()["pagination"]["total"]
    assert api.post("/v1/log/batch", {"decisions": _items()}, format="json").status_code in (200, 207)
    assert api.get("/v1/audit-trail").json()["pagination"]["total"] == before
    assert len(_series(api, one)) == 12


def test_a_late_outcome_is_a_point_once_and_never_on_a_reliance_chart(api):
    mid = api.post("/v1/drift-monitors", MONITOR, format="json").json()["monitor_id"]
    assert api.post("/v1/log", log(None, "late-1", c=0.8, followed=True), format="json").status_code == 201
    assert _series(api, mid) == []
    assert api.post("/v1/log", {"decision_id": "late-1", "outcome": "deny"}, format="json").status_code == 201
    assert (
        api.post("/v1/log", {"decision_id": "late-1", "outcome": "approve"}, format="json").status_code == 201
    )
    points = _series(api, mid)
    assert len(points) == 1 and points[0]["event"] == 1  # the first outcome's value kept


def test_drift_events_reach_a_webhook(api, insecure, receiver):
    _, secret = webhook(receiver.url, ["drift_alarm.raised", "drift_monitor.configured"])
    api.post("/v1/drift-monitors", MONITOR, format="json")
    for item in _items():
        api.post("/v1/log", item, format="json")
    dispatch.deliveries_dispatch_due()
    bodies = [Verifier(secret).verify(r.body, r.headers) for r in receiver.requests]
    types = [b["type"] for b in bodies]
    assert types[0] == "drift_monitor.configured" and "drift_alarm.raised" in types
    raised = next(b for b in bodies if b["type"] == "drift_alarm.raised")["data"]
    assert raised["regulation"] == "EU AI Act Art. 14(4)(b), 26(5)" and raised["entry_sequence"] > 0
    r = api.post(
        "/v1/webhooks", {"url": f"{receiver.url}/x", "events": ["probe_sprt.concluded"]}, format="json"
    )
    assert r.status_code == 201


def test_erasing_a_reviewer_pauses_and_rekeys_their_monitors(api):
    mid = api.post(
        "/v1/drift-monitors", {"chart": "probe_sprt", "scope": "user", "user_id": "rev-9"}, format="json"
    ).json()["monitor_id"]
    probe = {"kind": "known_wrong", "correct_decision": "deny"}
    for i in range(3):  # three misses conclude h1: an alarm naming the reviewer
        api.post(
            "/v1/log", log(None, f"pr-{i}", c=0.8, followed=True, user="rev-9", probe=probe), format="json"
        )
    r = erase(api, user_id="rev-9")
    assert r.status_code in (200, 201, 202), r.content
    monitor = api.get(f"/v1/drift-monitors/{mid}").json()
    assert monitor["enabled"] is False and monitor["status"] == "paused"
    assert monitor["user_id"] != "rev-9" and "rev-9" not in monitor["name"]
    (alarm,) = api.get("/v1/drift-alarms").json()["data"]
    assert alarm["user_id"] == monitor["user_id"] and "rev-9" not in str(alarm["monitor"])
    drift = [
        e for e in api.get("/v1/audit-trail").json()["data"] if e["type"].startswith(("drift", "probe_sprt"))
    ]
    assert drift and all(e["erased"] and e["user_id"] is None for e in drift)
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_a_writes_drift_entries_follow_all_its_entries_by_point_then_monitor(api):
    first = api.post("/v1/drift-monitors", {**MONITOR, "h": 0.5}, format="json").json()["monitor_id"]
    second = api.post("/v1/drift-monitors", {**MONITOR, "h": 0.5}, format="json").json()["monitor_id"]
    sprt = api.post("/v1/drift-monitors", {"chart": "probe_sprt", "scope": "organization"}, format="json")
    probe = {"kind": "known_wrong", "correct_decision": "deny"}
    items = [
        log(None, "o-1", c=0.9, followed=True, outcome="deny"),  # both CUSUM monitors signal here
        log(None, "p-1", c=0.9, followed=True, probe=probe),
        log(None, "p-2", c=0.9, followed=True, probe=probe),
        log(None, "p-3", c=0.9, followed=True, probe=probe),  # the SPRT concludes h1 here
    ]
    assert api.post("/v1/log/batch", {"decisions": items}, format="json").status_code in (200, 201)
    entries = sorted(api.get("/v1/audit-trail", {"limit": 100}).json()["data"], key=lambda e: e["sequence"])
    written = [(e["type"], e.get("monitor_id")) for e in entries if e["sequence"] > 3]
    assert written == [
        ("decision", None),
        ("decision", None),
        ("decision", None),
        ("decision", None),
        ("drift_alarm.raised", first),
        ("drift_alarm.raised", second),
        ("probe_sprt.concluded", sprt.json()["monitor_id"]),
        ("drift_alarm.raised", sprt.json()["monitor_id"]),
    ]


def test_a_drift_entry_commits_subgroups_as_an_empty_object(api):
    """The personal part of a drift entry commits `"subgroups": {}` (docs/reference/drift.md, The
    entries), as every entry without subgroups does, which the verifiers recompute."""
    api.post(
        "/v1/drift-monitors", {"chart": "probe_sprt", "scope": "user", "user_id": "rev-9"}, format="json"
    )
    entry = AuditEntry.objects.get(type="drift_monitor.configured")
    committed = {"context": None, "subgroups": {}, "subject_id": None, "user_id": "rev-9"}
    assert json.loads(entry.canonical)["personal"] == commitment(bytes(entry.salt), committed)
    listed = next(
        e for e in api.get("/v1/audit-trail").json()["data"] if e["type"] == "drift_monitor.configured"
    )
    assert listed["personal_fields"] == committed
