"""The review-effort and probe fields of a decision over HTTP (docs/reference/oversight.md):
validation, storage, the entry (shown and hashed only when present), replays and the fixed
outcome of a probe."""

import datetime as dt
import hashlib
import hmac
import json

import pytest

from tests.oversight.helpers import ago, decision, probe

pytestmark = pytest.mark.django_db


def _log(api, body):
    return api.post("/v1/log", body, format="json")


def _fields(r):
    return {e["field"] for e in r.json().get("errors", [])}


def test_review_seconds_is_stored_and_shown_in_the_decision_and_its_entry(api):
    r = _log(api, decision("ann", seconds=42.5))
    assert r.status_code == 201, r.content
    assert r.json()["review_seconds"] == 42.5 and r.json()["review_started_at"] is None
    assert r.json()["probe"] is None
    entry = api.get(f"/v1/audit-trail/{r.json()['entry_id']}").json()
    assert entry["review_seconds"] == 42.5
    assert "probe" not in entry


def test_an_entry_without_review_time_or_probe_has_neither_key(api):
    r = _log(api, decision("ann"))
    entry = api.get(f"/v1/audit-trail/{r.json()['entry_id']}").json()
    assert "review_seconds" not in entry and "probe" not in entry
    assert r.json()["review_seconds"] is None and r.json()["review_started_at"] is None


def test_review_started_at_alone_gives_review_seconds_from_the_timestamp(api):
    r = _log(
        api,
        decision("ann", timestamp="2026-11-20T10:00:30.250Z", review_started_at="2026-11-20T11:00:00+01:00"),
    )
    assert r.status_code == 201, r.content
    assert r.json()["review_seconds"] == 30.25
    assert r.json()["review_started_at"] == "2026-11-20T10:00:00.000Z"


def test_review_started_at_without_timestamp_is_measured_to_now(api):
    r = _log(api, decision("ann", timestamp=None, review_started_at=ago(seconds=20)))
    assert r.status_code == 201, r.content
    assert 19.5 <= r.json()["review_seconds"] <= 25


def test_both_review_fields_within_one_second_are_accepted(api):
    body = decision(
        "ann",
        timestamp="2026-11-20T10:00:30Z",
        review_started_at="2026-11-20T10:00:00Z",
        review_seconds=30.9,
    )
    r = _log(api, body)
    assert r.status_code == 201, r.content
    assert r.json()["review_seconds"] == 30.9


@pytest.mark.parametrize("seconds", [28.9, 31.1])
def test_both_review_fields_more_than_one_second_apart_are_refused(api, seconds):
    body = decision(
        "ann",
        timestamp="2026-11-20T10:00:30Z",
        review_started_at="2026-11-20T10:00:00Z",
        review_seconds=seconds,
    )
    r = _log(api, body)
    assert r.status_code == 400 and r.json()["code"] == "VALIDATION_ERROR"
    assert "review_seconds" in _fields(r)


def test_review_started_after_the_timestamp_is_refused(api):
    body = decision("ann", timestamp="2026-11-20T10:00:00Z", review_started_at="2026-11-20T10:00:00.001Z")
    r = _log(api, body)
    assert r.status_code == 400 and "review_started_at" in _fields(r)
    r = _log(
        api,
        decision(
            "ann",
            timestamp=None,
            review_started_at=(dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)).isoformat(),
        ),
    )
    assert r.status_code == 400 and "review_started_at" in _fields(r)


def test_a_start_more_than_a_day_before_the_decision_is_refused(api):
    body = decision("ann", timestamp="2026-11-20T10:00:00Z", review_started_at="2026-11-19T09:59:59Z")
    r = _log(api, body)
    assert r.status_code == 400 and "review_started_at" in _fields(r)


@pytest.mark.parametrize("seconds", [-0.001, 86_400.001, 1e9, "30", True, [1]])
def test_review_seconds_outside_0_to_86400_or_not_a_number_is_refused(api, seconds):
    r = _log(api, decision("ann", seconds=seconds))
    assert r.status_code == 400 and "review_seconds" in _fields(r)


@pytest.mark.parametrize("seconds", [0, 86_400])
def test_review_seconds_at_the_bounds_is_accepted(api, seconds):
    assert _log(api, decision("ann", seconds=seconds)).status_code == 201


@pytest.mark.parametrize("raw", ["yesterday", 17, "2026-13-01T00:00:00Z"])
def test_an_unparseable_review_start_is_refused(api, raw):
    r = _log(api, decision("ann", review_started_at=raw))
    assert r.status_code == 400 and "review_started_at" in _fields(r)


def test_a_probe_is_stored_with_its_correct_decision_as_outcome(api):
    r = _log(api, probe("ann", "known_wrong", followed=True))
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["probe"] == {"kind": "known_wrong", "correct_decision": "deny"}
    assert body["outcome"] == "deny"
    # its own response still carries the calibration figures, with the outcome known
    assert body["followed_ai"] is True and body["calibration_category"] == "OVERTRUSTING"
    entry = api.get(f"/v1/audit-trail/{body['entry_id']}").json()
    assert entry["probe"] == {"kind": "known_wrong", "correct_decision": "deny"}
    assert entry["outcome"] == "deny"


def test_known_wrong_must_differ_from_the_recommendation_after_trim_and_casefold(api):
    body = decision("ann", probe={"kind": "known_wrong", "correct_decision": "  APPROVE "})
    r = _log(api, body)
    assert r.status_code == 400 and "probe.correct_decision" in _fields(r)


def test_known_right_must_equal_the_recommendation_after_trim_and_casefold(api):
    assert (
        _log(api, decision("ann", probe={"kind": "known_right", "correct_decision": "deny"})).status_code
        == 400
    )
    r = _log(api, decision("ann", probe={"kind": "known_right", "correct_decision": " Approve"}))
    assert r.status_code == 201, r.content
    assert r.json()["outcome"] == " Approve" and r.json()["calibration_category"] == "CALIBRATED"


@pytest.mark.parametrize(
    "value",
    [
        "known_wrong",
        {"kind": "maybe", "correct_decision": "deny"},
        {"kind": "Known_Wrong", "correct_decision": "deny"},
        {"kind": "known_wrong"},
        {"kind": "known_wrong", "correct_decision": "   "},
        {"kind": "known_wrong", "correct_decision": 3},
        {"kind": "known_wrong", "correct_decision": "deny", "note": "x"},
        {"kind": "known_wrong", "correct_decision": "x" * 1001},
    ],
)
def test_a_malformed_probe_is_refused(api, value):
    r = _log(api, decision("ann", probe=value))
    assert r.status_code == 400 and r.json()["code"] == "VALIDATION_ERROR"
    assert any(field.startswith("probe") for field in _fields(r))
    assert api.get("/v1/audit-trail").json()["pagination"]["total"] == 0


def test_an_outcome_sent_with_a_probe_must_be_its_correct_decision(api):
    r = _log(api, probe("ann", "known_wrong", followed=False, outcome="approve"))
    assert r.status_code == 400 and "outcome" in _fields(r)
    r = _log(api, probe("ann", "known_wrong", followed=False, outcome=" DENY "))
    assert r.status_code == 201 and r.json()["outcome"] == "deny"


def test_a_later_outcome_of_a_probe_is_a_conflict(api):
    r = _log(api, probe("ann", "known_wrong", followed=False, decision_id="p1"))
    assert r.status_code == 201
    for outcome in ["approve", "deny"]:
        r = _log(api, {"decision_id": "p1", "outcome": outcome})
        assert r.status_code == 409 and r.json()["code"] == "DECISION_CONFLICT"
    items = [{"decision_id": "p1", "outcome": "approve"}, decision("bob", decision_id="ok1")]
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert [x["status"] for x in r.json()["results"]] == [409, 201]
    assert r.json()["results"][0]["error"]["code"] == "DECISION_CONFLICT"
    entries = api.get("/v1/audit-trail", {"decision_id": "p1"}).json()["data"]
    assert [e["type"] for e in entries] == ["decision"]


def test_the_review_fields_and_probe_are_part_of_the_replay_payload(api):
    body = decision("ann", seconds=12, decision_id="r1", timestamp="2026-11-20T10:00:00Z")
    assert _log(api, body).status_code == 201
    assert _log(api, body).status_code == 200
    assert _log(api, {**body, "review_seconds": 12.0}).status_code == 200
    assert _log(api, {**body, "review_seconds": 13}).status_code == 409
    assert _log(api, {**body, "review_seconds": None}).status_code == 409
    p = probe("ann", "known_wrong", followed=True, decision_id="r2", timestamp="2026-11-20T10:00:00Z")
    assert _log(api, p).status_code == 201
    assert _log(api, {**p, "outcome": "deny"}).status_code == 200
    assert _log(api, {k: v for k, v in p.items() if k != "probe"}).status_code == 409
    started = decision(
        "ann", decision_id="r3", timestamp="2026-11-20T10:00:30Z", review_started_at="2026-11-20T10:00:00Z"
    )
    assert _log(api, started).status_code == 201
    assert _log(api, {**started, "review_started_at": "2026-11-20T10:00:01Z"}).status_code == 409


def test_a_decision_logged_without_the_new_fields_keeps_its_replay(api):
    """A body without the new fields replays as before (the fingerprint only covers them when sent)."""
    body = decision("ann", decision_id="old1", timestamp="2026-11-20T10:00:00Z")
    assert _log(api, body).status_code == 201
    assert _log(api, {**body, "probe": None, "review_seconds": None}).status_code == 200


def test_batch_items_and_calibrate_take_the_same_fields_and_rules(api):
    items = [
        decision("ann", seconds=5),
        decision("ann", seconds=-1),
        probe("ann", "known_right", followed=False),
        decision("ann", probe={"kind": "known_right", "correct_decision": "deny"}),
    ]
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert [x["status"] for x in r.json()["results"]] == [201, 400, 201, 400]
    r = api.post(
        "/v1/calibrate",
        {**decision("cal", timestamp="2026-11-20T10:00:30Z", review_started_at="2026-11-20T10:00:00Z")},
        format="json",
    )
    assert r.status_code == 200, r.content
    trail = api.get("/v1/audit-trail", {"user_id": "cal"}).json()["data"]
    assert trail[0]["review_seconds"] == 30.0
    r = api.post("/v1/calibrate", decision("cal", seconds=90_000), format="json")
    assert r.status_code == 400 and "review_seconds" in _fields(r)


def test_audit_trail_filters_probes(api):
    _log(api, decision("ann"))
    _log(api, probe("ann", "known_wrong", followed=False))
    _log(api, probe("bob", "known_right", followed=True))
    only = api.get("/v1/audit-trail", {"probe": "true"}).json()
    assert only["pagination"]["total"] == 2 and all("probe" in e for e in only["data"])
    real = api.get("/v1/audit-trail", {"probe": "false"}).json()
    assert real["pagination"]["total"] == 1 and "probe" not in real["data"][0]
    assert api.get("/v1/audit-trail", {"probe": "yes"}).status_code == 400
    assert api.get("/v1/audit-trail", {"probe": "true", "user_id": "bob"}).json()["pagination"]["total"] == 1


def _canonical(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_the_new_entry_fields_are_hashed_and_the_chain_verifies(api):
    """Recomputed independently (docs/reference/erasure.md): hash = sha256 of the entry's
    canonical text, which links to the previous hash and holds the review time and probe as
    shown; the personal fields are committed by HMAC-SHA256 under the entry's salt."""
    _log(api, decision("ann"))
    _log(api, decision("ann", seconds=7.25, subgroups={"gender": "f"}))
    _log(api, probe("ann", "known_wrong", followed=False, review_seconds=3))
    _log(api, probe("bob", "known_right", followed=True, context='"sequence":0 inside a string'))
    _log(api, decision("ann", outcome="deny"))
    entries = sorted(api.get("/v1/audit-trail").json()["data"], key=lambda e: e["sequence"])
    previous = "0" * 64
    for entry in entries:
        assert entry["format"] == 2
        canonical = json.loads(entry["canonical"])
        assert hashlib.sha256(entry["canonical"].encode()).hexdigest() == entry["hash"]
        assert canonical["previous_hash"] == previous == entry["previous_hash"]
        for field in ("review_seconds", "probe"):
            assert canonical.get(field) == entry.get(field)
        personal = hmac.new(
            bytes.fromhex(entry["salt"]), _canonical(entry["personal_fields"]).encode(), hashlib.sha256
        ).hexdigest()
        assert canonical["personal"] == personal
        previous = entry["hash"]
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    assert api.get("/v1/audit-trail/verify", {"full": "true"}).status_code == 202
