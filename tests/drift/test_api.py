"""The drift API over HTTP (docs/reference/drift.md): monitors, the charts processed in the write
that brings their points, alarms and their acknowledgement, errors and tenancy."""

import pytest

from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db(transaction=True)


def log(api, decision_id, *, c, followed, user="rev-1", model="loan", probe=None, outcome=None):
    body = {
        "decision_id": decision_id,
        "user_id": user,
        "model_id": model,
        "ai_recommendation": "approve",
        "ai_confidence": c,
        "user_decision": "approve" if followed else "deny",
    }
    if probe is not None:
        body["probe"] = probe
    if outcome is not None:
        body["outcome"] = outcome
    return body


def worked_baseline(api):
    """The worked example's baseline: 100 points at c = 0.3 (30 followed), 100 at 0.9 (90)."""
    items = []
    for i in range(100):
        items.append(log(api, f"b3-{i}", c=0.3, followed=i < 30))
        items.append(log(api, f"b9-{i}", c=0.9, followed=i < 90))
    for start in range(0, 200, 100):
        response = api.post("/v1/log/batch", {"decisions": items[start : start + 100]}, format="json")
        assert response.status_code in (200, 201, 207), response.content


def test_worked_example_alarm_signal_acknowledgement_and_restart(api):
    created = api.post(
        "/v1/drift-monitors",
        {"chart": "over_reliance", "scope": "user", "user_id": "rev-1", "model_id": "loan", "h": 4},
        format="json",
    )
    assert created.status_code == 201, created.content
    monitor = created.json()
    assert monitor["status"] == "baseline" and monitor["h_source"] == "given"
    worked_baseline(api)
    monitor = api.get(f"/v1/drift-monitors/{monitor['monitor_id']}").json()
    assert monitor["status"] == "live"
    assert monitor["baseline"]["fit"] == {
        "method": "mle",
        "intercept": -2.369559,
        "slope": 5.074204,
        "followed": 120,
    }
    mid = monitor["monitor_id"]
    for i in range(1, 25):
        assert api.post("/v1/log", log(api, f"d-{i}", c=0.3, followed=True), format="json").status_code == 201
        if i == 10:
            alarms = api.get("/v1/drift-alarms").json()["data"]
            assert len(alarms) == 1 and alarms[0]["point_index"] == 10
            assert alarms[0]["statistic"] == 4.307829 and alarms[0]["threshold"] == 4
    (alarm,) = api.get("/v1/drift-alarms", {"monitor_id": mid}).json()["data"]
    assert alarm["signals"] == 2 and alarm["last_signal_index"] == 20
    series = api.get(f"/v1/drift-monitors/{mid}/series").json()["data"]
    assert [p["index"] for p in series] == list(range(1, 25))
    assert (
        series[8]["x"] == 3.877046
        and series[9]["signal"] is True
        and series[9]["alarm_id"] == alarm["alarm_id"]
    )
    ack = api.post(
        f"/v1/drift-alarms/{alarm['alarm_id']}/acknowledge",
        {"disposition": "reviewer_coached", "note": "talked"},
        format="json",
    )
    assert ack.status_code == 200, ack.content
    assert ack.json()["status"] == "acknowledged" and ack.json()["acknowledged_by"].startswith("key:")
    again = api.post(
        f"/v1/drift-alarms/{alarm['alarm_id']}/acknowledge", {"disposition": "false_alarm"}, format="json"
    )
    assert_problem(again, 409, "DRIFT_ALARM_ALREADY_ACKNOWLEDGED")
    for i in range(25, 35):
        api.post("/v1/log", log(api, f"d-{i}", c=0.3, followed=True), format="json")
    alarms = api.get("/v1/drift-alarms", {"monitor_id": mid}).json()["data"]
    assert [a["point_index"] for a in alarms] == [34, 10]
    verified = api.get("/v1/audit-trail/verify").json()
    assert verified["valid"] is True, verified
    listed = api.get("/v1/audit-trail", {"limit": 100}).json()["data"]
    assert any(e["type"] == "drift_alarm.acknowledged" and e["context"] == "talked" for e in listed)
    # Every entry's type is one the served schema allows (the fuzzers validate responses by it).
    schema = api.get("/v1/schema", {"format": "json"}).json()["components"]["schemas"]
    type_ref = schema["AuditEntryFormat2Output"]["properties"]["type"]["$ref"]
    allowed = set(schema[type_ref.rsplit("/", 1)[1]]["enum"])
    assert {e["type"] for e in listed} - allowed == set()
    assert {"drift_monitor.configured", "drift_alarm.raised", "drift_alarm.acknowledged"} <= allowed


def test_replay_changes_no_chart(api):
    mid = api.post(
        "/v1/drift-monitors",
        {"chart": "ai_calibration_up", "scope": "organization", "h": 3},
        format="json",
    ).json()["monitor_id"]
    body = log(api, "o-1", c=0.9, followed=True, outcome="deny")
    assert api.post("/v1/log", body, format="json").status_code == 201
    assert api.post("/v1/log", body, format="json").status_code == 200
    series = api.get(f"/v1/drift-monitors/{mid}/series").json()["data"]
    assert len(series) == 1 and series[0]["event"] == 1


def test_sprt_worked_example_with_probes(api):
    mid = api.post(
        "/v1/drift-monitors", {"chart": "probe_sprt", "scope": "user", "user_id": "rev-1"}, format="json"
    ).json()["monitor_id"]
    probe = {"kind": "known_wrong", "correct_decision": "deny"}
    for i in range(3):
        api.post("/v1/log", log(api, f"p-m{i}", c=0.8, followed=True, probe=probe), format="json")
    monitor = api.get(f"/v1/drift-monitors/{mid}").json()
    assert monitor["state"]["conclusions_h1"] == 1
    assert monitor["sprt"]["upper_bound"] == 2.890372
    for i in range(9):
        api.post("/v1/log", log(api, f"p-c{i}", c=0.8, followed=False, probe=probe), format="json")
    monitor = api.get(f"/v1/drift-monitors/{mid}").json()
    assert monitor["state"]["conclusions_h0"] == 1
    series = api.get(f"/v1/drift-monitors/{mid}/series").json()["data"]
    assert series[2]["conclusion"] == "h1" and series[2]["llr_sum"] == 3.295837
    assert series[11]["conclusion"] == "h0" and series[11]["llr_sum"] == -2.26183


@pytest.mark.parametrize(
    "body, field",
    [
        ({"chart": "over_reliance", "scope": "user", "user_id": "r", "R_A": 2, "h": 4}, "R_A"),
        ({"chart": "over_reliance", "scope": "user", "user_id": "r"}, "h"),
        (
            {"chart": "over_reliance", "scope": "user", "user_id": "r", "h": 4, "arl0_target": 200},
            "arl0_target",
        ),
        ({"chart": "over_reliance", "scope": "user", "user_id": "r", "h": 4, "odds_ratio": 1}, "odds_ratio"),
        ({"chart": "probe_sprt", "scope": "user", "user_id": "r", "h": 4}, "h"),
        ({"chart": "team", "scope": "user", "user_id": "r", "h": 4}, "chart"),
        ({"chart": "over_reliance", "scope": "team", "h": 4}, "scope"),
        ({"chart": "over_reliance", "scope": "user", "user_id": "r", "h": 1001}, "h"),
    ],
)
def test_bad_monitor_answers_400_naming_the_field_and_stores_nothing(api, body, field):
    response = api.post("/v1/drift-monitors", body, format="json")
    problem = assert_problem(response, 400, "VALIDATION_ERROR")
    assert problem["errors"][0]["field"] == field
    assert api.get("/v1/drift-monitors").json()["data"] == []
    assert api.get("/v1/audit-trail").json()["data"] == []


@pytest.mark.parametrize(
    "body, message",
    [
        ({"h": 0}, "must be greater than 0 and at most 1,000"),
        ({"h": 1000.5}, "must be greater than 0 and at most 1,000"),
        ({"h": "4"}, "must be a number"),
        ({"h": True}, "must be a number"),
    ],
)
def test_a_refused_h_is_named_once_with_its_true_rule(api, body, message):
    """h is any number in (0, 1,000], integer or not: the message says so, once."""
    response = api.post("/v1/drift-monitors", {"chart": "over_reliance", "scope": "organization", **body},
                        format="json")  # fmt: skip
    problem = assert_problem(response, 400, "VALIDATION_ERROR")
    assert problem["errors"] == [{"field": "h", "message": message}]
    created = api.post("/v1/drift-monitors", {"chart": "over_reliance", "scope": "organization", "h": 2.5},
                       format="json")  # fmt: skip
    assert created.status_code == 201 and created.json()["h"] == 2.5
    patched = api.patch(f"/v1/drift-monitors/{created.json()['monitor_id']}", body, format="json")
    assert assert_problem(patched, 400, "VALIDATION_ERROR")["errors"] == [{"field": "h", "message": message}]


def test_previous_baseline_too_short_is_409(api):
    response = api.post(
        "/v1/drift-monitors",
        {
            "chart": "over_reliance",
            "scope": "organization",
            "h": 4,
            "baseline": {"mode": "previous", "decisions": 50},
        },
        format="json",
    )
    assert_problem(response, 409, "DRIFT_BASELINE_TOO_SHORT")


def test_calibrate_errors(api):
    sprt = api.post(
        "/v1/drift-monitors", {"chart": "probe_sprt", "scope": "organization"}, format="json"
    ).json()
    assert_problem(api.post(f"/v1/drift-monitors/{sprt['monitor_id']}/calibrate", {"arl0_target": 200}, format="json"),
                   409, "DRIFT_NOT_CALIBRATABLE")  # fmt: skip
    cusum = api.post("/v1/drift-monitors", {"chart": "over_reliance", "scope": "organization", "h": 4},
                     format="json").json()  # fmt: skip
    url = f"/v1/drift-monitors/{cusum['monitor_id']}/calibrate"
    assert_problem(api.post(url, {"arl0_target": 200}, format="json"), 409, "DRIFT_BASELINE_INCOMPLETE")
    assert_problem(api.post(url, {"arl0_target": 5}, format="json"), 400, "VALIDATION_ERROR")


def test_previous_baseline_calibrated_at_creation(api):
    worked_baseline(api)
    response = api.post(
        "/v1/drift-monitors",
        {"chart": "over_reliance", "scope": "user", "user_id": "rev-1", "arl0_target": 200, "seed": 7,
         "baseline": {"mode": "previous", "decisions": 200}},
        format="json",
    )  # fmt: skip
    assert response.status_code == 201, response.content
    monitor = api.get(f"/v1/drift-monitors/{response.json()['monitor_id']}").json()
    assert monitor["status"] == "live" and monitor["h_source"] == "calibrated"
    assert 1.9 < monitor["h"] < 2.2
    assert monitor["baseline"]["fit"]["slope"] == 5.074204
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_patch_delete_and_tenancy(api, other_api):
    mid = api.post("/v1/drift-monitors", {"chart": "over_reliance", "scope": "organization", "h": 4},
                   format="json").json()["monitor_id"]  # fmt: skip
    for method, url in [
        ("get", f"/v1/drift-monitors/{mid}"),
        ("patch", f"/v1/drift-monitors/{mid}"),
        ("delete", f"/v1/drift-monitors/{mid}"),
        ("post", f"/v1/drift-monitors/{mid}/calibrate"),
        ("get", f"/v1/drift-monitors/{mid}/series"),
    ]:
        assert_problem(getattr(other_api, method)(url, {}, format="json"), 404, "NOT_FOUND")
    assert_problem(
        api.patch(f"/v1/drift-monitors/{mid}", {"chart": "x"}, format="json"), 400, "VALIDATION_ERROR"
    )
    patched = api.patch(f"/v1/drift-monitors/{mid}", {"h": 5}, format="json")
    assert patched.status_code == 200 and patched.json()["h"] == 5
    assert api.delete(f"/v1/drift-monitors/{mid}").status_code == 204
    assert_problem(api.get(f"/v1/drift-monitors/{mid}"), 404, "NOT_FOUND")
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_series_pages_are_index_ranges(api):
    mid = api.post("/v1/drift-monitors", {"chart": "ai_calibration_up", "scope": "organization", "h": 1000},
                   format="json").json()["monitor_id"]  # fmt: skip
    items = [log(api, f"s-{i}", c=0.8, followed=True, outcome="approve") for i in range(12)]
    assert api.post("/v1/log/batch", {"decisions": items}, format="json").status_code in (200, 201)
    url = f"/v1/drift-monitors/{mid}/series"

    def indexes(**params):
        answer = api.get(url, params).json()
        return [p["index"] for p in answer["data"]], answer["pagination"]

    assert indexes(limit=5) == ([1, 2, 3, 4, 5], {"page": 1, "limit": 5, "total": 12, "total_pages": 3,
                                                  "has_more": True})  # fmt: skip
    assert indexes(limit=5, page=3)[0] == [11, 12]
    assert indexes(limit=3, page=2, from_index=4, to_index=9) == (
        [7, 8, 9],
        {"page": 2, "limit": 3, "total": 6, "total_pages": 2, "has_more": False},
    )
    assert indexes(limit=5, page=4)[0] == []
    assert indexes(from_index=10**30) == ([], {"page": 1, "limit": 500, "total": 0, "total_pages": 0,
                                               "has_more": False})  # fmt: skip
    assert indexes(to_index=10**30, page=10**30)[0] == []


def test_lists_refuse_unknown_filter_values_and_series_limits(api):
    assert_problem(api.get("/v1/drift-alarms", {"status": "closed"}), 400, "VALIDATION_ERROR")
    assert_problem(api.get("/v1/drift-alarms", {"severity": "huge"}), 400, "VALIDATION_ERROR")
    assert_problem(api.get("/v1/drift-monitors", {"chart": "team"}), 400, "VALIDATION_ERROR")
    mid = api.post(
        "/v1/drift-monitors", {"chart": "probe_sprt", "scope": "organization"}, format="json"
    ).json()
    url = f"/v1/drift-monitors/{mid['monitor_id']}/series"
    assert_problem(api.get(url, {"limit": 5001}), 400, "VALIDATION_ERROR")
    assert api.get(url, {"limit": 5000}).status_code == 200
    assert_problem(api.get("/v1/drift-alarms/alm_01jd0000000000000000000000"), 404, "NOT_FOUND")


def test_the_fifty_first_monitor_is_refused_and_appends_nothing(api):
    for i in range(50):
        body = {"chart": "probe_sprt", "scope": "organization", "name": f"m{i}"}
        assert api.post("/v1/drift-monitors", body, format="json").status_code == 201
    entries = api.get("/v1/audit-trail").json()["pagination"]["total"]
    refused = api.post("/v1/drift-monitors", {"chart": "probe_sprt", "scope": "organization"}, format="json")
    assert_problem(refused, 409, "DRIFT_MONITOR_LIMIT_REACHED")
    assert api.get("/v1/audit-trail").json()["pagination"]["total"] == entries


def test_a_patch_that_changes_nothing_appends_nothing_and_a_pause_stops_the_chart(api):
    mid = api.post("/v1/drift-monitors", {"chart": "ai_calibration_up", "scope": "organization", "h": 3},
                   format="json").json()["monitor_id"]  # fmt: skip
    entries = api.get("/v1/audit-trail").json()["pagination"]["total"]
    assert api.patch(f"/v1/drift-monitors/{mid}", {"h": 3}, format="json").status_code == 200
    assert api.get("/v1/audit-trail").json()["pagination"]["total"] == entries
    paused = api.patch(f"/v1/drift-monitors/{mid}", {"enabled": False}, format="json").json()
    assert paused["status"] == "paused"
    api.post("/v1/log", log(api, "x-1", c=0.9, followed=True, outcome="deny"), format="json")
    assert api.get(f"/v1/drift-monitors/{mid}/series").json()["data"] == []
    resumed = api.patch(f"/v1/drift-monitors/{mid}", {"enabled": True}, format="json").json()
    assert resumed["status"] == "live"
    api.post("/v1/log", log(api, "x-2", c=0.9, followed=True, outcome="deny"), format="json")
    (point,) = api.get(f"/v1/drift-monitors/{mid}/series").json()["data"]
    assert point["decision_id"] == "x-2" and point["restart"] is True


@pytest.mark.parametrize(
    "path", ["/v1/drift-monitors", "/v1/drift-monitors/mon_x/calibrate", "/v1/drift-alarms/alm_x"]
)
def test_options_on_drift_routes_is_a_problem_document_not_a_500(api, path):
    """The fuzzers' OPTIONS found a 500: these views have no DRF serializer to describe."""
    r = api.options(path)
    assert r.status_code == 405, r.content
    assert r["Content-Type"].startswith("application/problem+json")


def test_default_name_of_a_long_user_id_fits(api):
    """A user id may have 256 characters, a name 200: the default name is cut, never a 500."""
    user_id = "r" * 256
    created = api.post(
        "/v1/drift-monitors", {"chart": "probe_sprt", "scope": "user", "user_id": user_id}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["name"] == ("probe_sprt " + user_id)[:200]
    assert created.json()["user_id"] == user_id


def test_every_drift_entry_type_is_an_audit_entry_type():
    from audit.models import AuditEntry
    from drift.trail import TYPES

    assert set(TYPES) <= set(AuditEntry.Type.values)
