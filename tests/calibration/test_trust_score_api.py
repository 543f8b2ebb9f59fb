"""POST /trust-score, GET /trust-score/trend (docs/reference/calibration.md), risk_user.identified and
threshold.breached (docs/reference/events.md) over HTTP and through the beat task."""

import datetime as dt

import pytest
import time_machine

from calibration.models import RiskUserState, Threshold
from calibration.tasks import thresholds_check
from webhooks.models import Event

pytestmark = pytest.mark.django_db

FIGURE_KEYS = {
    "scored_decisions",
    "unscored_decisions",
    "coverage",
    "agreement_rate",
    "override_rate",
    "mean_ai_confidence",
    "calibration_gap",
    "trust_score",
    "attainable_score",
    "reliance_gap",
    "reliance_skill",
    "overtrust_rate",
    "overtrust_effective_n",
    "overtrust_rate_ci",
    "undertrust_rate",
    "undertrust_effective_n",
    "undertrust_rate_ci",
    "category",
    "risk_level",
    "outcomes_known",
    "ai_accuracy",
    "overreliance_rate",
    "underreliance_rate",
    "switch_rate",
    "rair",
    "rsr",
    "automation_bias_incidents",
    "automation_bias_rate",
    "confidence_decisions",
    "discrimination",
    "discrimination_ci",
    "followed_ai_errors",
    "confidence_recalibrated",
}
TRUST_KEYS = {
    "scope",
    "user_id",
    "model_id",
    "from",
    "to",
    "decisions_analyzed",
    *FIGURE_KEYS,
    "risk_users",
    "computed_at",
}


def log_many(api, n, *, user_id, user="approve", confidence=None, ai="approve", **extra):
    for _ in range(n):
        body = {"user_id": user_id, "ai_recommendation": ai, "user_decision": user, **extra}
        if confidence is not None:
            body["ai_confidence"] = confidence
        assert api.post("/v1/log", body, format="json").status_code == 201


def trust(api, **body):
    r = api.post("/v1/trust-score", body, format="json")
    assert r.status_code == 200, r.content
    return r.json()


def days_ago(n: int, hour: int = 12) -> str:
    day = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=n)
    return dt.datetime.combine(day, dt.time(hour), tzinfo=dt.UTC).isoformat()


# --- POST /trust-score -----------------------------------------------------------------------


def test_user_scope_answers_the_users_figures(api):
    log_many(api, 10, user_id="alice", confidence=0.3)
    body = trust(api, user_id="alice")
    assert set(body) == TRUST_KEYS
    assert body["scope"] == "user" and body["user_id"] == "alice"
    assert body["decisions_analyzed"] == 10
    assert body["trust_score"] == pytest.approx(0.3)
    assert body["category"] == "OVERTRUSTING"
    assert body["risk_level"] == "insufficient_data"  # under 30 scored decisions
    assert body["risk_users"] == []
    today = dt.datetime.now(dt.UTC).date()
    assert body["to"] == today.isoformat()
    assert body["from"] == (today - dt.timedelta(days=89)).isoformat()


def test_organization_scores_weigh_every_scored_decision_the_same(api):
    log_many(api, 10, user_id="follows", user="approve", confidence=0.9)
    log_many(api, 10, user_id="overrides", user="deny", confidence=0.9)
    log_many(api, 5, user_id="overrides", user="deny")  # unscored
    body = trust(api)
    assert set(body) == TRUST_KEYS | {"confidence_check"}
    assert body["scope"] == "organization" and body["user_id"] is None
    assert body["trust_score"] == pytest.approx((10 * 0.9 + 10 * 0.1) / 20)
    assert body["attainable_score"] == pytest.approx(0.9)
    assert body["calibration_gap"] == pytest.approx((10 * 0.1 + 10 * -0.9) / 20)
    assert body["agreement_rate"] == pytest.approx(10 / 25)  # rates of every decision
    assert body["undertrust_rate"] == pytest.approx(0.5)  # w_u = 0.8 each: 10 of 20 overrode
    assert body["decisions_analyzed"] == 25 and body["scored_decisions"] == 20
    assert body["coverage"] == pytest.approx(0.8)
    assert body["risk_level"] == "insufficient_data"
    assert body["confidence_check"]["verdict"] == "not_checked"


def test_the_organisations_effective_n_counts_reviewers_as_clusters(api):
    # Two reviewers at opposite extremes: Kish would see 20 decisions, the clusters see 2.
    log_many(api, 10, user_id="follows", user="approve", confidence=0.3)
    log_many(api, 10, user_id="overrides", user="deny", confidence=0.3)
    body = trust(api)
    assert body["overtrust_rate"] == pytest.approx(0.5)
    # v = 2/1 * ((4 - 0.5*4)^2 + (0 - 0.5*4)^2) / 8^2 = 0.25; r(1-r)/v = 1.
    assert body["overtrust_effective_n"] == pytest.approx(1.0)
    alone = trust(api, user_id="follows")
    assert alone["overtrust_effective_n"] == pytest.approx(10.0)  # Kish, one reviewer


def test_risk_levels_follow_the_reliance_gap(api):
    log_many(api, 30, user_id="low", user="approve", confidence=0.9)  # gap 0
    log_many(api, 15, user_id="medium", user="approve", confidence=0.9)
    log_many(api, 15, user_id="medium", user="approve", confidence=0.45)  # gap 0.05 (0.55 - 0.45 on half)
    log_many(api, 30, user_id="high", user="approve", confidence=0.3)  # gap 0.4
    assert trust(api, user_id="low")["risk_level"] == "low"
    assert trust(api, user_id="medium")["reliance_gap"] == pytest.approx(0.05)
    assert trust(api, user_id="medium")["risk_level"] == "medium"
    assert trust(api, user_id="high")["risk_level"] == "high"
    assert trust(api, user_id="nobody")["risk_level"] == "insufficient_data"


def test_empty_scope_has_null_figures_and_insufficient_data(api):
    body = trust(api, user_id="ghost")
    assert body["decisions_analyzed"] == 0
    assert body["trust_score"] is None and body["agreement_rate"] is None
    assert body["category"] == "INSUFFICIENT_DATA" and body["risk_level"] == "insufficient_data"


def test_risk_users_have_30_scored_decisions_largest_gap_first(api):
    log_many(api, 30, user_id="worst", user="deny", confidence=0.9)  # gap 0.8
    log_many(api, 30, user_id="bad", user="approve", confidence=0.3)  # gap 0.4
    log_many(api, 29, user_id="few", user="deny", confidence=0.9)  # too few decisions
    log_many(api, 30, user_id="fine", user="approve", confidence=0.9)  # gap 0
    log_many(api, 30, user_id="unscored", user="deny")  # nothing to judge
    risk = trust(api)["risk_users"]
    assert [r["user_id"] for r in risk] == ["worst", "bad"]
    assert risk[0] == {
        "user_id": "worst",
        "trust_score": pytest.approx(0.1),
        "reliance_gap": pytest.approx(0.8),
        "risk_level": "high",
        "decisions": 30,
        "scored_decisions": 30,
        "category": "UNDERTRUSTING",
        "overtrust_rate": None,
        "overtrust_rate_ci": [0.0, 1.0],
        "undertrust_rate": 1.0,
        "undertrust_rate_ci": [pytest.approx(0.8865, abs=1e-4), 1.0],
    }


def test_risk_user_identified_fires_once_when_a_user_newly_becomes_a_risk_user(api):
    log_many(api, 30, user_id="worst", user="deny", confidence=0.9)
    trust(api)
    trust(api)
    trust(api, user_id="worst")
    events = list(Event.objects.filter(type="risk_user.identified"))
    assert len(events) == 1
    assert events[0].data["user_id"] == "worst"
    assert events[0].data["trust_score"] == pytest.approx(0.1)
    assert events[0].data["reliance_gap"] == pytest.approx(0.8)
    assert events[0].data["regulation"] == "All"


def test_every_risk_user_is_flagged_and_announced_when_only_100_are_listed(api):
    for first in range(0, 102, 30):
        items = [
            {
                "user_id": f"worst-{u:03d}",
                "ai_recommendation": "approve",
                "user_decision": "deny",
                "ai_confidence": 0.9,
            }
            for u in range(first, min(first + 30, 102))
            for _ in range(30)
        ]
        response = api.post("/v1/log/batch", {"decisions": items}, format="json")
        assert response.status_code == 200 and response.json()["rejected"] == 0, response.content
    for _ in range(2):
        assert len(trust(api)["risk_users"]) == 100
        assert RiskUserState.objects.filter(at_risk=True).count() == 102  # the two not listed too
        assert Event.objects.filter(type="risk_user.identified").count() == 102  # once each


def test_risk_user_identified_fires_at_most_once_per_24_hours(api):
    # The window decides whether "u" is at risk: 30 bad decisions on one day, 30 good on another.
    bad, good = days_ago(5)[:10], days_ago(4)[:10]
    log_many(api, 30, user_id="u", user="deny", confidence=0.9, timestamp=days_ago(5))
    log_many(api, 30, user_id="u", user="approve", confidence=0.9, timestamp=days_ago(4))
    with time_machine.travel(dt.datetime.now(dt.UTC) - dt.timedelta(hours=30), tick=True) as traveller:
        assert [r["user_id"] for r in trust(api, **{"from": bad, "to": bad})["risk_users"]] == ["u"]  # fires
        assert trust(api, **{"from": good, "to": good})["risk_users"] == []  # recovered
        assert [r["user_id"] for r in trust(api, **{"from": bad, "to": bad})["risk_users"]] == ["u"]  # silent
        assert Event.objects.filter(type="risk_user.identified").count() == 1
        traveller.shift(dt.timedelta(hours=2))
        assert trust(api, **{"from": good, "to": good})["risk_users"] == []
    trust(api, **{"from": bad, "to": bad})  # 30 h after the first event: fires again
    assert Event.objects.filter(type="risk_user.identified").count() == 2


def test_a_users_flag_is_cleared_with_the_score_that_cleared_it(api):
    bad, good = days_ago(5)[:10], days_ago(4)[:10]
    log_many(api, 30, user_id="u", user="deny", confidence=0.9, timestamp=days_ago(5))
    log_many(api, 30, user_id="u", user="approve", confidence=0.9, timestamp=days_ago(4))
    trust(api, user_id="u", **{"from": bad, "to": bad})
    assert RiskUserState.objects.get(user_id="u").at_risk is True
    recovered = trust(api, user_id="u", **{"from": good, "to": good})
    state = RiskUserState.objects.get(user_id="u")
    assert state.at_risk is False and state.trust_score == pytest.approx(recovered["trust_score"])
    trust(api, user_id="u", **{"from": bad, "to": bad})  # flagged again, within 24 hours: silent
    assert RiskUserState.objects.get(user_id="u").at_risk is True
    assert Event.objects.filter(type="risk_user.identified").count() == 1


def test_model_filter_limits_the_figures_to_that_models_decisions(api):
    log_many(api, 10, user_id="alice", user="approve", confidence=0.9, model_id="m1")
    log_many(api, 10, user_id="alice", user="deny", confidence=0.9, model_id="m2")
    assert trust(api, user_id="alice", model_id="m1")["trust_score"] == pytest.approx(0.9)
    assert trust(api, model_id="m2")["trust_score"] == pytest.approx(0.1)
    assert trust(api, user_id="alice")["decisions_analyzed"] == 20


def test_from_and_to_select_decisions_by_their_day(api):
    log_many(api, 3, user_id="alice", confidence=0.9, timestamp=days_ago(10))
    log_many(api, 2, user_id="alice", confidence=0.9, timestamp=days_ago(2))
    cut = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=5)).isoformat()
    assert trust(api, user_id="alice", **{"from": cut})["decisions_analyzed"] == 2
    assert trust(api, user_id="alice", to=cut)["decisions_analyzed"] == 3


@pytest.mark.parametrize(
    "body",
    [{"from": "2026-11-10", "to": "2026-11-01"}, {"from": "soon"}, {"user_id": 7}, {"to": "2026-02-30"}],
)
def test_trust_score_bad_input_is_a_validation_error(api, body):
    r = api.post("/v1/trust-score", body, format="json")
    assert r.status_code == 400
    assert r.json()["code"] == "VALIDATION_ERROR"


def test_trust_score_is_tenant_scoped(api, other_api):
    log_many(api, 30, user_id="worst", user="deny", confidence=0.9)
    body = trust(other_api)
    assert body["decisions_analyzed"] == 0 and body["risk_users"] == []


# --- GET /trust-score/trend -------------------------------------------------------------------


def trend(api, **params):
    r = api.get("/v1/trust-score/trend", params)
    assert r.status_code == 200, r.content
    return r.json()


def test_trend_defaults_to_30_zero_filled_daily_points_ending_today(api):
    log_many(api, 2, user_id="alice", confidence=0.9, timestamp=days_ago(3))
    body = trend(api)
    today = dt.datetime.now(dt.UTC).date()
    assert body["interval"] == "day"
    assert body["to"] == today.isoformat()
    assert body["from"] == (today - dt.timedelta(days=29)).isoformat()
    points = body["points"]
    assert len(points) == 30
    assert [p["period_start"] for p in points] == [
        (today - dt.timedelta(days=29 - i)).isoformat() for i in range(30)
    ]
    busy = points[26]
    assert busy["period_start"] == (today - dt.timedelta(days=3)).isoformat()
    assert (
        busy["decisions"] == 2 and busy["trust_score"] == pytest.approx(0.9) and busy["agreement_rate"] == 1.0
    )
    empty = points[0]
    assert empty == {
        "period_start": empty["period_start"],
        "decisions": 0,
        "scored_decisions": 0,
        "trust_score": None,
        "attainable_score": None,
        "reliance_gap": None,
        "agreement_rate": None,
        "overtrust_count": 0,
        "undertrust_count": 0,
        "followed_ai_errors": 0,
    }


def days_of(api, user_id: str, overrides: list[int]) -> None:
    """Four decisions a day at confidence 0.9 over the last len(overrides) days (the last one
    yesterday), `overrides[k]` of day k overridden: T = 0.9 - 0.2 * overrides, R = 0.2 * overrides."""
    for k, n in enumerate(overrides):
        ago = len(overrides) - k
        log_many(api, n, user_id=user_id, user="deny", confidence=0.9, timestamp=days_ago(ago))
        log_many(api, 4 - n, user_id=user_id, user="approve", confidence=0.9, timestamp=days_ago(ago))


def test_the_trend_grades_the_reliance_gap_by_weighted_least_squares(api):
    days_of(api, "alice", [4, 3, 2, 1, 0])
    body = trend(api, user_id="alice", **{"from": days_ago(5)[:10], "to": days_ago(1)[:10]})
    assert [p["reliance_gap"] for p in body["points"]] == pytest.approx([0.8, 0.6, 0.4, 0.2, 0.0], abs=1e-12)
    assert [p["attainable_score"] for p in body["points"]] == pytest.approx([0.9] * 5)
    assert [p["undertrust_count"] for p in body["points"]] == [4, 3, 2, 1, 0]
    summary = body["trend"]
    assert summary["direction"] == "improving" and summary["periods_fitted"] == 5
    assert summary["slope"] == pytest.approx(-0.2) and summary["slope_se"] == pytest.approx(0, abs=1e-9)


def test_trend_declining_stable_and_undetermined(api):
    days_of(api, "d", [0, 1, 2, 3, 4])
    assert trend(api, user_id="d")["trend"]["direction"] == "declining"
    days_of(api, "s", [4, 0, 4, 0, 4])  # R 0.8, 0, 0.8, 0, 0.8: no slope
    summary = trend(api, user_id="s")["trend"]
    assert summary["direction"] == "stable" and summary["slope"] == pytest.approx(0, abs=1e-12)
    # Fewer than four periods with scored decisions: no direction.
    days_of(api, "short", [4, 2, 0])
    assert trend(api, user_id="short")["trend"]["direction"] == "undetermined"
    assert trend(api, user_id="nobody")["trend"] == {
        "direction": "undetermined",
        "slope": None,
        "slope_se": None,
        "periods_fitted": 0,
    }


def test_a_period_cut_by_the_window_is_shown_but_not_fitted(api):
    log_many(api, 3, user_id="alice", confidence=0.9, timestamp="2026-10-07T10:00:00Z")
    body = trend(api, user_id="alice", interval="week", **{"from": "2026-10-08", "to": "2026-10-25"})
    assert body["points"][0]["decisions"] == 0  # the week of 10-05 is cut: its decisions before 10-08
    body = trend(api, user_id="alice", interval="week", **{"from": "2026-10-06", "to": "2026-10-25"})
    assert body["points"][0]["decisions"] == 3 and body["trend"]["periods_fitted"] == 0


def test_trend_by_week_and_month_zero_fills_periods(api):
    log_many(api, 3, user_id="alice", confidence=0.9, timestamp="2026-10-07T10:00:00Z")  # Wednesday
    week = trend(api, interval="week", **{"from": "2026-09-28", "to": "2026-10-25"})
    assert [p["period_start"] for p in week["points"]] == [
        "2026-09-28",
        "2026-10-05",
        "2026-10-12",
        "2026-10-19",
    ]
    assert [p["decisions"] for p in week["points"]] == [0, 3, 0, 0]
    month = trend(api, interval="month", **{"from": "2026-08-15", "to": "2026-11-20"})
    assert [p["period_start"] for p in month["points"]] == [
        "2026-08-01",
        "2026-09-01",
        "2026-10-01",
        "2026-11-01",
    ]
    assert [p["decisions"] for p in month["points"]] == [0, 0, 3, 0]


def test_organization_trend_points_weigh_users_like_the_trust_score(api):
    log_many(api, 10, user_id="follows", user="approve", confidence=0.9, timestamp=days_ago(1))
    log_many(api, 10, user_id="overrides", user="deny", confidence=0.9, timestamp=days_ago(1))
    point = trend(api)["points"][-2]
    assert point["decisions"] == 20 and point["trust_score"] == pytest.approx(0.5)


def test_a_periods_scores_are_the_scored_decision_weighted_means_of_its_days(api):
    # Outcome-only decisions: the attainable score of every day uses the AI accuracy of the whole window.
    for day, (user, outcome, n) in enumerate(
        [("approve", "approve", 3), ("approve", "deny", 2), ("deny", "approve", 4), ("deny", "deny", 1)]
    ):
        log_many(api, n, user_id="alice", user=user, outcome=outcome, timestamp=days_ago(day + 2))
        log_many(
            api, 1, user_id="bob", user="approve", confidence=0.2 + 0.1 * day, timestamp=days_ago(day + 2)
        )
    window = {"from": days_ago(5)[:10], "to": days_ago(2)[:10]}
    days = [p for p in trend(api, **window)["points"] if p["scored_decisions"]]
    whole = trust(api, **window)
    for key in ("trust_score", "attainable_score", "reliance_gap"):
        mean = sum(p[key] * p["scored_decisions"] for p in days) / sum(p["scored_decisions"] for p in days)
        assert mean == pytest.approx(whole[key], abs=1e-12)
    weekly = trend(api, interval="month", **window)["points"]
    assert sum(p["scored_decisions"] for p in weekly) == whole["scored_decisions"]


@pytest.mark.parametrize(
    "params",
    [
        {"interval": "hour"},
        {"from": "2026-11-10", "to": "2026-11-01"},
        {"from": "x"},
        {"from": "2000-01-01", "to": "2026-01-01"},
    ],
)
def test_trend_bad_input_is_a_validation_error(api, params):
    r = api.get("/v1/trust-score/trend", params)
    assert r.status_code == 400
    assert r.json()["code"] == "VALIDATION_ERROR"


# --- threshold.breached ------------------------------------------------------------------------


def test_threshold_breach_fires_once_until_the_figure_recovers(api):
    threshold = Threshold.objects.create(
        customer_id="acme",
        figure="override_rate",
        comparison="gt",
        value=0.5,
        window_days=7,
        name="Override rate above half",
    )
    log_many(api, 3, user_id="alice", user="deny", confidence=0.6)
    thresholds_check()
    thresholds_check()
    events = list(Event.objects.filter(type="threshold.breached"))
    assert len(events) == 1
    assert events[0].data["threshold_id"] == threshold.pk
    assert events[0].data["figure"] == "override_rate"
    assert events[0].data["observed"] == pytest.approx(1.0)
    assert events[0].data["regulation"] == "All"
    log_many(api, 4, user_id="alice", user="approve", confidence=0.6)  # 3/7 overrides: recovered
    thresholds_check()
    threshold.refresh_from_db()
    assert threshold.breached is False
    log_many(api, 2, user_id="alice", user="deny", confidence=0.6)  # 5/9: breached again
    thresholds_check()
    assert Event.objects.filter(type="threshold.breached").count() == 2


def test_threshold_on_trust_score_below_a_value(api, other_api):
    Threshold.objects.create(
        customer_id="acme", figure="trust_score", comparison="lt", value=0.6, window_days=30
    )
    Threshold.objects.create(
        customer_id="acme", figure="trust_score", comparison="lt", value=0.6, window_days=30, is_active=False
    )
    log_many(other_api, 5, user_id="x", user="deny", confidence=0.9)  # another customer's figures
    thresholds_check()
    assert not Event.objects.filter(type="threshold.breached").exists()
    log_many(api, 5, user_id="x", user="deny", confidence=0.9)
    thresholds_check()
    event = Event.objects.get(type="threshold.breached")
    assert event.customer_id == "acme"
    assert event.data["observed"] == pytest.approx(0.1)


def test_the_beat_task_identifies_risk_users_of_active_customers(api):
    log_many(api, 30, user_id="worst", user="deny", confidence=0.9)
    thresholds_check()
    assert Event.objects.filter(type="risk_user.identified", data__user_id="worst").count() == 1


def test_every_risk_level_served_is_one_the_schema_documents(api):
    """An organisation with few scored decisions is `insufficient_data`; the schema's enum of
    the trust score's risk_level lists it (it once shared its component with the amplification
    alert's riskLevel, none..critical, and a generated client refused the answer)."""
    from django.test import Client

    api.post(
        "/v1/log",
        {"user_id": "u", "ai_recommendation": "a", "user_decision": "a", "ai_confidence": 0.9},
        format="json",
    )
    answer = api.post("/v1/trust-score", {}, format="json").json()
    assert answer["risk_level"] == "insufficient_data"
    schemas = Client().get("/v1/schema", {"format": "json"}).json()["components"]["schemas"]
    ref = schemas["TrustScoreOutput"]["properties"]["risk_level"]["$ref"].rsplit("/", 1)[1]
    assert schemas[ref]["enum"] == ["low", "medium", "high", "insufficient_data"]
    alert_ref = schemas["AlertOutput"]["properties"]["riskLevel"]["$ref"].rsplit("/", 1)[1]
    assert schemas[alert_ref]["enum"] == ["none", "low", "medium", "high", "critical"]
