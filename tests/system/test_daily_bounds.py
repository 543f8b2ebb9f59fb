"""Time bounds on the endpoints whose figures are daily aggregates (POST /trust-score, GET
/trust-score/trend, GET /bias/subgroups), docs/reference/conventions.md, Time bounds: a date
covers its UTC day, a timestamp is exact. Dates and timestamps on a UTC day boundary read the daily aggregates; a timestamp
inside a day makes the trust score and the trend compute from the decisions in the exact
window; the subgroup figures take the whole days from their daily statistics and the partial
edge days from the decisions (docs/reference/conventions.md, Time bounds)."""

import pytest

pytestmark = pytest.mark.django_db

STAMPS = ["2026-11-18T10:00:00Z", "2026-11-19T03:00:00Z", "2026-11-19T21:00:00Z", "2026-11-20T05:00:00Z"]


@pytest.fixture
def decisions(api):
    for i, stamp in enumerate(STAMPS):
        body = {
            "decision_id": f"d{i}",
            "user_id": "alice",
            "ai_recommendation": "approve",
            "user_decision": "approve",
            "ai_confidence": 0.9,
            "subgroups": {"gender": "f"},
            "timestamp": stamp,
        }
        assert api.post("/v1/log", body, format="json").status_code == 201


def _trust(api, **bounds):
    return api.post("/v1/trust-score", {"user_id": "alice", **bounds}, format="json")


@pytest.mark.parametrize(
    ("bounds", "counted", "window"),
    [
        ({"from": "2026-11-19", "to": "2026-11-19"}, 2, ("2026-11-19", "2026-11-19")),
        ({"from": "2026-11-19T00:00:00Z", "to": "2026-11-20T00:00:00Z"}, 2, ("2026-11-19", "2026-11-19")),
        ({"from": "2026-11-19T01:00:00+01:00", "to": "2026-11-20"}, 3, ("2026-11-19", "2026-11-20")),
        ({"from": "2026-11-18", "to": "2026-11-21T00:00:00.000Z"}, 4, ("2026-11-18", "2026-11-20")),
    ],
)
def test_trust_score_honours_dates_and_day_boundary_timestamps_exactly(
    api, decisions, bounds, counted, window
):
    response = _trust(api, **bounds)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["decisions_analyzed"] == counted
    assert (body["from"], body["to"]) == window


@pytest.mark.parametrize(
    ("bounds", "counted", "window"),
    [
        (
            {"from": "2026-11-19", "to": "2026-11-19T12:00:00Z"},
            1,
            ("2026-11-19T00:00:00.000Z", "2026-11-19T12:00:00.000Z"),
        ),
        (
            {"from": "2026-11-19T12:00:00Z", "to": "2026-11-20"},
            2,
            ("2026-11-19T12:00:00.000Z", "2026-11-21T00:00:00.000Z"),
        ),
        (
            {"from": "2026-11-19T03:00:00Z", "to": "2026-11-19T03:00:00.001Z"},
            1,
            ("2026-11-19T03:00:00.000Z", "2026-11-19T03:00:00.001Z"),
        ),
        (
            {"from": "2026-11-18T10:00:00.001Z", "to": "2026-11-20T05:00:00Z"},
            2,
            ("2026-11-18T10:00:00.001Z", "2026-11-20T05:00:00.000Z"),
        ),
    ],
)
def test_trust_score_honours_a_timestamp_inside_a_day_exactly(api, decisions, bounds, counted, window):
    response = _trust(api, **bounds)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["decisions_analyzed"] == counted
    assert (body["from"], body["to"]) == window


def test_exact_window_figures_equal_the_daily_ones_over_the_same_decisions(api, decisions):
    daily = _trust(api, **{"from": "2026-11-19", "to": "2026-11-19"}).json()
    exact = _trust(api, **{"from": "2026-11-19T00:00:00.001Z", "to": "2026-11-19T23:59:59Z"}).json()
    for key in ("decisions_analyzed", "trust_score", "agreement_rate", "calibration_gap", "category"):
        assert exact[key] == daily[key], key


def test_trust_score_refuses_from_after_to_with_exact_bounds(api, decisions):
    response = _trust(api, **{"from": "2026-11-19T12:00:00Z", "to": "2026-11-19T11:00:00Z"})
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"


def test_trend_honours_day_boundary_and_inside_day_timestamps(api, decisions):
    response = api.get("/v1/trust-score/trend?from=2026-11-19T00:00:00Z&to=2026-11-21T00:00:00Z")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["from"], body["to"]) == ("2026-11-19", "2026-11-20")
    assert [(p["period_start"], p["decisions"]) for p in body["points"]] == [
        ("2026-11-19", 2),
        ("2026-11-20", 1),
    ]
    response = api.get("/v1/trust-score/trend?from=2026-11-18&to=2026-11-19T12:00:00Z")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["from"], body["to"]) == ("2026-11-18T00:00:00.000Z", "2026-11-19T12:00:00.000Z")
    assert [(p["period_start"], p["decisions"]) for p in body["points"]] == [
        ("2026-11-18", 1),
        ("2026-11-19", 1),
    ]


def test_subgroups_honour_day_boundary_timestamps_and_timestamps_inside_a_day(api, decisions):
    response = api.get("/v1/bias/subgroups?from=2026-11-19T00:00:00Z&to=2026-11-20T00:00:00Z")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["from"], body["to"]) == ("2026-11-19", "2026-11-19")
    assert [g["decisions"] for g in body["attributes"]["gender"]["groups"]] == [2]
    response = api.get("/v1/bias/subgroups?from=2026-11-19T06:00:00Z&to=2026-11-20")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["from"], body["to"]) == ("2026-11-19T06:00:00.000Z", "2026-11-21T00:00:00.000Z")
    assert [g["decisions"] for g in body["attributes"]["gender"]["groups"]] == [2]
    response = api.get("/v1/bias/subgroups?from=2026-11-19T02:00:00Z&to=2026-11-19T04:00:00Z")
    assert [g["decisions"] for g in response.json()["attributes"]["gender"]["groups"]] == [1]


def test_a_to_at_the_first_instant_of_the_calendar_is_a_validation_error(api):
    response = api.get("/v1/trust-score/trend?to=0001-01-01T00:00:00Z")
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"
