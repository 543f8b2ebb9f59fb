"""POST /calibrate over HTTP: each rule of docs/reference/calibration.md, Category of a decision,
outcome precedence, the per-user figures on hand-computed tables, and the response body."""

import datetime as dt

import pytest

from webhooks.models import Event

pytestmark = pytest.mark.django_db

CALIBRATE_KEYS = {
    "decision_id",
    "entry_id",
    "user_id",
    "followed_ai",
    "confidence",
    "calibration_category",
    "explanation",
    "user_profile",
    "recommendations",
    "analyzed_at",
}
PROFILE_KEYS = {
    "user_id",
    "decisions",
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


def calibrate(api, *, ai="approve", user="approve", confidence=None, outcome=None, user_id="alice", **extra):
    body = {"user_id": user_id, "ai_recommendation": ai, "user_decision": user, **extra}
    if confidence is not None:
        body["confidence"] = confidence
    if outcome is not None:
        body["outcome"] = outcome
    r = api.post("/v1/calibrate", body, format="json")
    assert r.status_code == 200, r.content
    return r.json()


def category(api, **kwargs):
    return calibrate(api, **kwargs)["calibration_category"]


# --- per-record category: one case per rule -----------------------------------------------------


def test_outcome_known_followed_and_ai_wrong_is_overtrusting(api):
    assert category(api, ai="approve", user="approve", outcome="deny") == "OVERTRUSTING"


def test_outcome_known_overrode_and_ai_right_is_undertrusting(api):
    assert category(api, ai="approve", user="deny", outcome="approve") == "UNDERTRUSTING"


def test_outcome_known_followed_and_ai_right_is_calibrated(api):
    assert category(api, ai="approve", user="approve", outcome="approve") == "CALIBRATED"


def test_outcome_known_overrode_and_ai_wrong_is_calibrated(api):
    assert category(api, ai="approve", user="deny", outcome="deny") == "CALIBRATED"


def test_followed_below_0_5_confidence_is_overtrusting(api):
    assert category(api, user="approve", confidence=0.49) == "OVERTRUSTING"


def test_followed_or_overrode_at_0_5_confidence_is_calibrated(api):
    assert category(api, user="approve", confidence=0.5) == "CALIBRATED"
    assert category(api, user="deny", confidence=0.5) == "CALIBRATED"


def test_overrode_above_0_5_confidence_is_undertrusting(api):
    assert category(api, user="deny", confidence=0.51) == "UNDERTRUSTING"


def test_followed_at_high_confidence_and_overrode_at_low_confidence_are_calibrated(api):
    assert category(api, user="approve", confidence=0.95) == "CALIBRATED"
    assert category(api, user="deny", confidence=0.1) == "CALIBRATED"


@pytest.mark.parametrize("user", ["approve", "deny"])
def test_no_confidence_and_no_outcome_is_unscored_and_fires_nothing(api, user):
    assert category(api, user=user) == "UNSCORED"
    assert not Event.objects.filter(type="trust.miscalibrated").exists()


def test_the_confidence_judges_the_act_even_where_the_outcome_is_known(api):
    # Followed at 0.2: the AI itself called its advice more likely wrong, whatever happened after.
    assert category(api, user="approve", confidence=0.2, outcome="approve") == "OVERTRUSTING"
    # Overrode at 0.95: whatever happened after.
    assert category(api, user="deny", confidence=0.95, outcome="deny") == "UNDERTRUSTING"
    assert category(api, user="approve", confidence=0.95, outcome="deny") == "CALIBRATED"


def test_a_late_outcome_decides_an_unscored_record(api):
    assert category(api, user="approve", decision_id="late-1") == "UNSCORED"
    r = api.post("/v1/log", {"decision_id": "late-1", "outcome": "deny"}, format="json")
    assert r.status_code == 201, r.content
    entries = api.get("/v1/audit-trail", {"decision_id": "late-1"}).json()["data"]
    assert sorted(e["calibration_category"] for e in entries) == ["OVERTRUSTING", "UNSCORED"]


def test_comparisons_trim_and_case_fold(api):
    body = calibrate(api, ai="Approve", user=" APPROVE ", confidence=0.3, outcome=" deny")
    assert body["followed_ai"] is True
    assert body["calibration_category"] == "OVERTRUSTING"


# --- the response ----------------------------------------------------------------------------


def test_calibrate_answers_the_c6_body_and_records_the_decision_as_log_does(api):
    body = calibrate(
        api,
        user="approve",
        confidence=0.3,
        decision_id="cal-1",
        model_id="m1",
        timestamp="2026-11-20T08:00:00",
        context="case 9",
    )
    assert set(body) == CALIBRATE_KEYS
    assert set(body["user_profile"]) == PROFILE_KEYS
    assert body["decision_id"] == "cal-1" and body["confidence"] == 0.3
    assert body["analyzed_at"].endswith("Z")
    assert body["explanation"].endswith(".") and body["explanation"].count(". ") == 0  # one sentence
    assert any("written justification" in r and "0.50" in r for r in body["recommendations"])
    entry = api.get("/v1/audit-trail", {"decision_id": "cal-1"}).json()["data"][0]
    assert entry["entry_id"] == body["entry_id"]
    assert entry["timestamp"] == "2026-11-20T08:00:00.000Z"  # naive taken as UTC
    assert entry["model_id"] == "m1" and entry["context"] == "case 9"


def test_calibrate_replay_is_idempotent_and_a_different_payload_conflicts(api):
    first = calibrate(api, decision_id="cal-2", confidence=0.9)
    again = calibrate(api, decision_id="cal-2", confidence=0.9)
    assert again["entry_id"] == first["entry_id"]
    assert again["user_profile"]["decisions"] == 1
    r = api.post(
        "/v1/calibrate",
        {
            "decision_id": "cal-2",
            "user_id": "alice",
            "ai_recommendation": "approve",
            "user_decision": "deny",
            "confidence": 0.9,
        },
        format="json",
    )
    assert r.status_code == 409 and r.json()["code"] == "DECISION_CONFLICT"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"user_id": "a", "ai_recommendation": "x", "user_decision": "x", "confidence": 1.5}, "confidence"),
        ({"ai_recommendation": "x", "user_decision": "x"}, "user_id"),
        (
            {"user_id": "a", "ai_recommendation": "x", "user_decision": "x", "context": "c" * 20_000},
            "context",
        ),
        (
            {"user_id": "a", "ai_recommendation": "x", "user_decision": "x", "timestamp": "2026-02-30"},
            "timestamp",
        ),
    ],
)
def test_calibrate_bad_input_is_a_validation_error(api, body, field):
    r = api.post("/v1/calibrate", body, format="json")
    assert r.status_code == 400
    assert r.json()["code"] == "VALIDATION_ERROR"
    assert field in {e["field"] for e in r.json()["errors"]}


def test_calibrate_fires_trust_miscalibrated_per_miscalibrated_record(api):
    calibrate(api, user="approve", confidence=0.3)
    calibrate(api, user="deny", confidence=0.9)
    calibrate(api, user="approve", confidence=0.9)
    events = Event.objects.filter(type="trust.miscalibrated").order_by("created_at")
    assert [e.data["calibration_category"] for e in events] == ["OVERTRUSTING", "UNDERTRUSTING"]
    assert all(e.data["source"] == "calibrate" and e.data["regulation"] for e in events)


# --- per-user figures -----------------------------------------------------------------------

HAND_CONFIDENCES = [0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.7, 0.6, 0.3, 0.2]
HAND_FOLLOWED = [1, 1, 1, 1, 1, 0, 1, 1, 1, 0]


def test_the_hand_case_of_the_reference(api):
    """docs/reference/calibration.md, Worked example."""
    for c, f in zip(HAND_CONFIDENCES, HAND_FOLLOWED, strict=True):
        p = calibrate(api, user="approve" if f else "deny", confidence=c)["user_profile"]
    assert p["trust_score"] == pytest.approx(0.70)
    assert p["attainable_score"] == pytest.approx(0.80)
    assert p["reliance_gap"] == pytest.approx(0.10)
    assert p["reliance_skill"] == pytest.approx(0.08 / 0.18)
    assert round(p["reliance_skill"], 4) == 0.4444
    assert p["overtrust_rate"] == pytest.approx(0.40)
    assert round(p["overtrust_effective_n"], 4) == 1.9231
    assert p["undertrust_rate"] == pytest.approx(0.6 / 5.0)  # w_u: 0.8 x4, 0.6 x2, 0.4, 0.2; overrode one 0.6
    assert p["category"] == "INSUFFICIENT_DATA"  # 10 scored, but the over-trust interval straddles 0.50
    assert p["risk_level"] == "insufficient_data"  # under 30 scored decisions
    assert p["scored_decisions"] == 10 and p["unscored_decisions"] == 0 and p["coverage"] == 1.0
    assert p["calibration_gap"] == pytest.approx((8 - 7.0) / 10)


def test_unscored_decisions_enter_no_figure_but_the_counts_of_all(api):
    for c, f in zip(HAND_CONFIDENCES, HAND_FOLLOWED, strict=True):
        calibrate(api, user="approve" if f else "deny", confidence=c)
    for _ in range(5):
        p = calibrate(api, user="approve")["user_profile"]
    assert p["decisions"] == 15 and p["scored_decisions"] == 10 and p["unscored_decisions"] == 5
    assert p["coverage"] == pytest.approx(10 / 15)
    assert p["trust_score"] == pytest.approx(0.70) and p["overtrust_rate"] == pytest.approx(0.40)
    assert p["agreement_rate"] == pytest.approx(13 / 15)  # counts every decision


def test_fewer_than_10_scored_decisions_is_insufficient_data(api):
    for _ in range(9):
        profile = calibrate(api, user="approve", confidence=0.3)["user_profile"]
    assert profile["category"] == "INSUFFICIENT_DATA"
    profile = calibrate(api, user="approve", confidence=0.3)["user_profile"]
    assert profile["scored_decisions"] == 10
    # Always followed where the AI said 0.3: rate 1 at Kish n 10, Wilson lower bound 0.72 > 0.50.
    assert profile["overtrust_rate"] == 1.0 and profile["overtrust_effective_n"] == pytest.approx(10)
    assert profile["overtrust_rate_ci"][0] == pytest.approx(0.7225, abs=1e-4)
    assert profile["category"] == "OVERTRUSTING"


def test_user_following_low_confidence_advice_has_hand_computed_figures(api):
    for _ in range(30):
        profile = calibrate(api, user="approve", confidence=0.3)["user_profile"]
    assert profile["trust_score"] == pytest.approx(0.3)  # q = p = 0.3 each
    assert profile["attainable_score"] == pytest.approx(0.7)
    assert profile["reliance_gap"] == pytest.approx(0.4)
    assert profile["reliance_skill"] == pytest.approx(
        0.0
    )  # following at random at the same rate scores 0.3 too
    assert profile["calibration_gap"] == pytest.approx(0.7)
    assert profile["automation_bias_incidents"] == 30 and profile["automation_bias_rate"] == 1.0
    assert profile["category"] == "OVERTRUSTING" and profile["risk_level"] == "high"


def test_user_overriding_confident_advice_is_undertrusting(api):
    for _ in range(10):
        profile = calibrate(api, user="deny", confidence=0.9)["user_profile"]
    assert profile["undertrust_rate"] == 1.0 and profile["overtrust_rate"] is None
    assert profile["overtrust_rate_ci"] == [0.0, 1.0] and profile["overtrust_effective_n"] == 0
    assert profile["category"] == "UNDERTRUSTING"
    assert profile["trust_score"] == pytest.approx(0.1)


def test_a_rubber_stamper_at_confident_advice_is_not_calibrated(api):
    # Follows everything; the AI is confident on 24 and unsure on 6 (0.3): over-trust 6 of 6.
    for i in range(30):
        profile = calibrate(api, user="approve", confidence=0.3 if i % 5 == 0 else 0.9)["user_profile"]
    assert profile["overtrust_rate"] == 1.0
    assert profile["category"] == "OVERTRUSTING"


def test_following_exactly_the_confident_advice_is_calibrated_with_skill_1(api):
    for i in range(40):
        c = 0.9 if i % 2 else 0.1
        profile = calibrate(api, user="approve" if c > 0.5 else "deny", confidence=c)["user_profile"]
    assert profile["trust_score"] == pytest.approx(0.9)
    assert profile["attainable_score"] == pytest.approx(0.9)
    assert profile["reliance_gap"] == pytest.approx(0.0, abs=1e-12)
    assert profile["reliance_skill"] == pytest.approx(1.0)
    assert profile["category"] == "CALIBRATED"
    assert profile["risk_level"] == "low"


def test_outcomes_score_realised_reliance_and_the_attainable_score_uses_the_ai_accuracy(api):
    # Outcome only: q = 1[followed == AI right]; a = max(pi, 1 - pi) with pi = 3/4.
    calibrate(api, user="approve", outcome="approve")  # followed, right: q 1
    calibrate(api, user="approve", outcome="approve")  # q 1
    calibrate(api, user="deny", outcome="approve")  # overrode, right: q 0 (UNDERTRUSTING)
    p = calibrate(api, user="approve", outcome="deny")["user_profile"]  # followed, wrong: q 0
    assert p["trust_score"] == pytest.approx(0.5)
    assert p["ai_accuracy"] == pytest.approx(0.75)
    assert p["attainable_score"] == pytest.approx(0.75)
    # Without a confidence a decision carries no stake weight: no over- or under-trust rate.
    assert (
        p["overtrust_rate"] is None and p["overtrust_effective_n"] == 0 and p["overtrust_rate_ci"] == [0, 1]
    )
    assert p["undertrust_rate"] is None and p["discrimination"] is None
    assert p["confidence_decisions"] == 0 and p["category"] == "INSUFFICIENT_DATA"
    # The followed error is counted apart, never as an automation-bias incident.
    assert p["followed_ai_errors"] == 1 and p["automation_bias_incidents"] == 0
    assert p["overreliance_rate"] == pytest.approx(1.0) and p["underreliance_rate"] == pytest.approx(1 / 3)


def test_switch_rate_rair_and_rsr_on_a_hand_computed_table(api):
    # (initial, ai, final, outcome)
    table = [
        ("deny", "approve", "approve", "approve"),  # initial wrong, AI right, switched to AI
        ("deny", "approve", "deny", "approve"),  # initial wrong, AI right, kept initial
        ("deny", "approve", "approve", "approve"),  # initial wrong, AI right, switched to AI
        ("approve", "deny", "approve", "approve"),  # initial right, AI wrong, kept initial
        ("approve", "deny", "deny", "approve"),  # initial right, AI wrong, switched to AI
        ("approve", "approve", "approve", "approve"),  # agreed from the start, both right
        ("deny", "deny", "deny", "approve"),  # agreed from the start, both wrong
    ]
    for initial, ai, final, outcome in table:
        p = calibrate(api, ai=ai, user=final, outcome=outcome, initial_decision=initial)["user_profile"]
    assert p["switch_rate"] == pytest.approx(3 / 5)  # final = AI among initial != AI
    assert p["rair"] == pytest.approx(2 / 3)
    assert p["rsr"] == pytest.approx(1 / 2)
    assert p["overreliance_rate"] == pytest.approx(2 / 3)  # AI wrong: rows 4, 5, 7; followed: 5, 7
    assert p["underreliance_rate"] == pytest.approx(1 / 4)  # AI right: rows 1, 2, 3, 6; overrode: 2


def test_reliance_figures_are_null_when_their_denominator_is_zero(api):
    p = calibrate(api, user="approve", confidence=0.7)["user_profile"]
    assert p["switch_rate"] is None and p["rair"] is None and p["rsr"] is None
    assert p["overreliance_rate"] is None and p["underreliance_rate"] is None


def test_trust_score_is_null_without_any_outcome_or_confidence(api):
    p = calibrate(api, user="approve")["user_profile"]
    assert p["trust_score"] is None and p["calibration_gap"] is None and p["mean_ai_confidence"] is None
    assert p["overtrust_rate"] is None and p["overtrust_rate_ci"] == [0.0, 1.0]
    assert p["decisions"] == 1 and p["scored_decisions"] == 0 and p["coverage"] == 0.0


def test_late_outcome_moves_the_users_figures(api):
    calibrate(api, user="approve", decision_id="lo-1")
    assert api.post("/v1/log", {"decision_id": "lo-1", "outcome": "deny"}, format="json").status_code == 201
    p = calibrate(api, user="approve", outcome="approve")["user_profile"]
    assert p["outcomes_known"] == 2 and p["scored_decisions"] == 2
    # lo-1 is now OVERTRUSTING, without a confidence: a followed AI error, not an incident
    assert p["followed_ai_errors"] == 1 and p["automation_bias_incidents"] == 0
    assert p["trust_score"] == pytest.approx(0.5)  # 1 of 2 appropriate


def test_profile_covers_the_last_90_days_only(api):
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=100)).isoformat()
    calibrate(api, user="approve", confidence=0.3, timestamp=old)
    p = calibrate(api, user="approve", confidence=0.9)["user_profile"]
    assert p["decisions"] == 1


def test_profiles_are_per_user_and_per_customer(api, other_api):
    calibrate(api, user_id="alice", confidence=0.3)
    calibrate(api, user_id="bob", confidence=0.3)
    p = calibrate(other_api, user_id="alice", confidence=0.3)["user_profile"]
    assert p["decisions"] == 1
