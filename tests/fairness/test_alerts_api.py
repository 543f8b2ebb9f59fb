"""GET/PATCH /bias/amplification and the analyze action: triage rules, history, tenancy, limits."""

import datetime as dt

import pytest
import time_machine

from tests.fairness.factories import AlertFactory, SignalFactory
from tests.fairness.helpers import ALERTS, SIGNALS, post_signal

pytestmark = pytest.mark.django_db


@pytest.fixture
def alert(api):
    return AlertFactory()


def patch(api, alert_id, **body):
    return api.patch(f"{ALERTS}/{alert_id}", body, format="json")


def test_alert_read_has_every_documented_field_and_the_signal(api, alert):
    body = api.get(f"{ALERTS}/{alert.id}").json()
    assert set(body) == {
        "id", "signalId", "modelId", "protectedAttribute", "amplificationScore", "riskLevel", "severity", "status",
        "analysis", "resolutionNotes", "resolvedBy", "resolvedAt", "acknowledgedAt", "createdAt", "updatedAt",
        "signal", "statusHistory",
    }  # fmt: skip
    assert body["id"].startswith("amp_")
    assert body["signal"]["id"] == alert.signal_id == body["signalId"]
    assert body["signal"]["alertId"] == alert.id
    assert body["status"] == "open" and body["statusHistory"] == []


def test_acknowledge_sets_acknowledged_at_once_and_keeps_it(api, alert):
    first = patch(api, alert.id, status="acknowledged").json()
    assert first["status"] == "acknowledged" and first["acknowledgedAt"]
    assert first["resolvedAt"] is None
    patch(api, alert.id, status="open")
    again = patch(api, alert.id, status="acknowledged").json()
    assert again["acknowledgedAt"] == first["acknowledgedAt"]


@pytest.mark.parametrize("final", ["resolved", "false_positive"])
def test_resolving_sets_resolved_at_and_stores_notes_and_resolver(api, alert, final):
    body = patch(api, alert.id, status=final, resolutionNotes="reviewed the cohort", resolvedBy="dana").json()
    assert body["status"] == final
    assert (
        body["resolvedAt"]
        and body["resolvedBy"] == "dana"
        and body["resolutionNotes"] == "reviewed the cohort"
    )


def test_reopening_clears_resolved_at(api, alert):
    patch(api, alert.id, status="resolved", resolvedBy="dana")
    body = patch(api, alert.id, status="open").json()
    assert body["status"] == "open" and body["resolvedAt"] is None
    assert body["resolvedBy"] == "dana"  # kept: it names who resolved it last


def test_every_status_change_is_recorded_oldest_first(api, alert):
    with time_machine.travel(dt.datetime(2026, 11, 21, 9, 0, tzinfo=dt.UTC), tick=False) as clock:
        patch(api, alert.id, status="acknowledged", resolvedBy="ann")
        clock.shift(60)
        patch(api, alert.id, status="resolved", resolvedBy="bob", resolutionNotes="fixed thresholds")
        clock.shift(60)
        patch(api, alert.id, status="open", resolutionNotes="came back")
        clock.shift(60)
        patch(api, alert.id, status="open")  # not a change: not recorded
    history = api.get(f"{ALERTS}/{alert.id}").json()["statusHistory"]
    assert [(h["from"], h["to"]) for h in history] == [("open", "acknowledged"), ("acknowledged", "resolved"),
                                                       ("resolved", "open")]  # fmt: skip
    assert [h["by"] for h in history[:2]] == ["ann", "bob"]
    assert history[2]["by"].startswith("api_key:key_")  # no resolvedBy: the key that made the change
    assert history[1]["notes"] == "fixed thresholds"
    assert [h["at"] for h in history] == ["2026-11-21T09:00:00.000Z", "2026-11-21T09:01:00.000Z",
                                          "2026-11-21T09:02:00.000Z"]  # fmt: skip


@pytest.mark.parametrize("body", [{}, {"status": "closed"}, {"status": None}, {"status": "resolved", "resolvedBy": 5},
                                  {"status": "open", "resolutionNotes": ["x"]}, {"status": "open", "resolvedBy": "x" * 256}])  # fmt: skip
def test_bad_patch_bodies_are_validation_errors_and_change_nothing(api, alert, body):
    response = api.patch(f"{ALERTS}/{alert.id}", body, format="json")
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"
    alert.refresh_from_db()
    assert alert.status == "open" and not alert.status_changes.exists()


def test_patch_of_non_object_body_is_rejected(api, alert):
    response = api.patch(f"{ALERTS}/{alert.id}", ["open"], format="json")
    assert response.status_code == 400


def test_put_and_delete_are_not_allowed(api, alert):
    assert api.put(f"{ALERTS}/{alert.id}", {"status": "open"}, format="json").status_code == 405
    assert api.delete(f"{ALERTS}/{alert.id}").status_code == 405


def test_other_customers_alert_is_404_for_read_patch_and_list(api, other_api, alert):
    assert other_api.get(f"{ALERTS}/{alert.id}").status_code == 404
    response = other_api.patch(f"{ALERTS}/{alert.id}", {"status": "resolved"}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "NOT_FOUND"
    assert other_api.get(ALERTS).json()["data"] == []
    alert.refresh_from_db()
    assert alert.status == "open"


def test_unknown_alert_is_404(api):
    assert api.get(f"{ALERTS}/amp_nope").status_code == 404


@pytest.fixture
def alert_set(api):
    with time_machine.travel(dt.datetime(2026, 11, 19, 8, 0, tzinfo=dt.UTC), tick=False) as clock:
        a = AlertFactory(severity="low", created_at=dt.datetime(2026, 11, 19, 8, 0, tzinfo=dt.UTC))
        clock.shift(dt.timedelta(days=1))
        b = AlertFactory(severity="critical", signal__protected_attribute="age_group",
                         created_at=dt.datetime(2026, 11, 20, 8, 0, tzinfo=dt.UTC))  # fmt: skip
        c = AlertFactory(severity="high", status="acknowledged",
                         created_at=dt.datetime(2026, 11, 21, 8, 0, tzinfo=dt.UTC))  # fmt: skip
    return {"a": a.id, "b": b.id, "c": c.id}


@pytest.mark.parametrize(("params", "expected"), [
    ({}, ["c", "b", "a"]),
    ({"status": "open"}, ["b", "a"]),
    ({"status": "acknowledged"}, ["c"]),
    ({"status": "resolved"}, []),
    ({"severity": "critical"}, ["b"]),
    ({"protectedAttribute": "age_group"}, ["b"]),
    ({"startDate": "2026-11-20"}, ["c", "b"]),
    ({"endDate": "2026-11-20"}, ["b", "a"]),
    ({"startDate": "2026-11-20T00:00:00Z", "endDate": "2026-11-20T23:59:59Z"}, ["b"]),
])  # fmt: skip
def test_alert_list_filters_newest_first(api, alert_set, params, expected):
    response = api.get(ALERTS, params)
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["data"]] == [alert_set[k] for k in expected]


def test_alert_list_envelope_and_paging(api, alert_set):
    body = api.get(ALERTS, {"limit": 1, "page": 2}).json()
    assert body["pagination"] == {"page": 2, "limit": 1, "total": 3, "totalPages": 3, "hasMore": True}
    assert body["data"][0]["id"] == alert_set["b"]
    assert "signal" not in body["data"][0]


@pytest.mark.parametrize("params", [{"status": "closed"}, {"severity": "none"}, {"severity": "HIGH"},
                                    {"startDate": "yesterday"}, {"limit": 0}])  # fmt: skip
def test_bad_alert_list_parameters_are_validation_errors(api, params):
    response = api.get(ALERTS, params)
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"


def test_alert_list_query_count_is_constant(api, alert_set, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        api.get(ALERTS)


# --- analyze -----------------------------------------------------------------------------------


def analyze(api, signal_id):
    return api.post(f"{ALERTS}/analyze/{signal_id}")


def test_analyze_answers_the_signal_analysis_and_alert(api):
    sig = post_signal(api).json()
    response = analyze(api, sig["id"])
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["signalId"] == sig["id"]
    assert body["analysis"]["status"] in ("completed", "insufficient_data")
    assert "alert" in body


def test_analyze_with_trailing_slash(api):
    sig = post_signal(api).json()
    assert api.post(f"{ALERTS}/analyze/{sig['id']}/").status_code == 200


def test_analyze_of_unknown_or_foreign_signal_is_404(api, other_api):
    sig = post_signal(api).json()
    assert analyze(api, "sig_nope").status_code == 404
    assert analyze(other_api, sig["id"]).status_code == 404


def test_the_11th_analysis_in_a_minute_is_rate_limited_per_customer(api, other_api):
    sig = post_signal(api).json()
    other_sig = post_signal(other_api).json()
    start = dt.datetime.now(dt.UTC)
    with time_machine.travel(start, tick=False) as clock:
        for _ in range(10):
            assert analyze(api, sig["id"]).status_code == 200
        limited = analyze(api, sig["id"])
        assert limited.status_code == 429
        assert limited.json()["code"] == "AMPLIFICATION_RATE_LIMIT"
        assert 1 <= int(limited["Retry-After"]) <= 60
        assert analyze(other_api, other_sig["id"]).status_code == 200
        clock.shift(61)
        assert analyze(api, sig["id"]).status_code == 200


def test_analyses_of_unknown_signals_do_not_count(api):
    sig = post_signal(api).json()
    for _ in range(15):
        analyze(api, "sig_nope")
    for _ in range(10):
        assert analyze(api, sig["id"]).status_code == 200


def test_analyze_accepts_no_get(api):
    sig = post_signal(api).json()
    assert api.get(f"{ALERTS}/analyze/{sig['id']}").status_code in (404, 405)


def test_signals_read_back_their_alert_id(api):
    alert = AlertFactory(signal=SignalFactory())
    assert api.get(f"{SIGNALS}/{alert.signal_id}").json()["alertId"] == alert.id
