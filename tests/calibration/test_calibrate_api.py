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
    "agreement_rate",
    "override_rate",
    "mean_ai_confidence",
    "overtrust_rate",
    "undertrust_rate",
    "calibration_gap",
    "trust_score",
    "category",
    "risk_level",
    "scored_decisions",
    "outcomes_known",
    "overreliance_rate",
    "underreliance_rate",
    "switch_rate",
    "rair",
    "rsr",
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


def test_no_outcome_followed_below_0_5_confidence_is_overtrusting(api):
    assert category(api, user="approve", confidence=0.49) == "OVERTRUSTING"


def test_no_outcome_followed_at_0_5_confidence_is_calibrated(api):
    assert category(api, user="approve", confidence=0.5) == "CALIBRATED"


def test_no_outcome_overrode_at_0_8_confidence_is_undertrusting(api):
    assert category(api, user="deny", confidence=0.8) == "UNDERTRUSTING"


def test_no_outcome_overrode_below_0_8_confidence_is_calibrated(api):
    assert category(api, user="deny", confidence=0.79) == "CALIBRATED"


def test_no_outcome_followed_at_high_confidence_is_calibrated(api):
    assert category(api, user="approve", confidence=0.95) == "CALIBRATED"


def test_no_outcome_overrode_at_low_confidence_is_calibrated(api):
    assert category(api, user="deny", confidence=0.1) == "CALIBRATED"


@pytest.mark.parametrize("user", ["approve", "deny"])
def test_no_confidence_and_no_outcome_is_calibrated(api, user):
    assert category(api, user=user) == "CALIBRATED"


def test_outcome_takes_precedence_over_a_low_confidence(api):
    # Followed at 0.2 would be OVERTRUSTING by confidence, but the AI was right.
    assert category(api, user="approve", confidence=0.2, outcome="approve") == "CALIBRATED"


def test_outcome_takes_precedence_over_a_high_confidence(api):
    # Overrode at 0.95 would be UNDERTRUSTING by confidence, but the AI was wrong.
    assert category(api, user="deny", confidence=0.95, outcome="deny") == "CALIBRATED"
    # Followed at 0.95 is fine by confidence, but the AI was wrong.
    assert category(api, user="approve", confidence=0.95, outcome="deny") == "OVERTRUSTING"


def test_comparisons_trim_and_case_fold(api):
    body = calibrate(api, ai="Approve", user=" APPROVE ", confidence=0.3, outcome=" deny")
    assert body["followed_ai"] is True
    assert body["calibration_category"] == "OVERTRUSTING"


def test_confidence_thresholds_are_settings(api, settings):
    settings.CALIBRATION_LOW_CONFIDENCE = 0.6
    settings.CALIBRATION_HIGH_CONFIDENCE = 0.9
    assert category(api, user="approve", confidence=0.55) == "OVERTRUSTING"
    assert category(api, user="deny", confidence=0.85) == "CALIBRATED"


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


def test_fewer_than_10_decisions_is_insufficient_data(api):
    for _ in range(9):
        profile = calibrate(api, user="approve", confidence=0.3)["user_profile"]
    assert profile["decisions"] == 9
    assert profile["category"] == "INSUFFICIENT_DATA"
    profile = calibrate(api, user="approve", confidence=0.3)["user_profile"]
    assert profile["decisions"] == 10
    assert profile["category"] == "OVERTRUSTING"


def test_user_following_low_confidence_advice_is_overtrusting_with_hand_computed_figures(api):
    for _ in range(10):
        profile = calibrate(api, user="approve", confidence=0.3)["user_profile"]
    # gap = mean(1 - 0.3) = 0.7; one bin [0.2, 0.4) with f=1, c=0.3 -> RCE 0.7, trust 0.3.
    assert profile["calibration_gap"] == pytest.approx(0.7)
    assert profile["trust_score"] == pytest.approx(0.3)
    assert profile["agreement_rate"] == 1.0 and profile["override_rate"] == 0.0
    assert profile["overtrust_rate"] == 1.0 and profile["undertrust_rate"] == 0.0
    assert profile["mean_ai_confidence"] == pytest.approx(0.3)
    assert profile["risk_level"] == "high"


def test_user_overriding_confident_advice_is_undertrusting(api):
    for _ in range(10):
        profile = calibrate(api, user="deny", confidence=0.9)["user_profile"]
    assert profile["calibration_gap"] == pytest.approx(-0.9)
    assert profile["category"] == "UNDERTRUSTING"
    assert profile["trust_score"] == pytest.approx(0.1)


def test_user_following_as_often_as_the_confidence_says_is_calibrated_with_trust_1(api):
    # In the [0.6, 0.8) band at 0.7 confidence, following 7 times out of 10 is RCE 0.
    for i in range(10):
        profile = calibrate(api, user="approve" if i < 7 else "deny", confidence=0.7)["user_profile"]
    assert profile["trust_score"] == pytest.approx(1.0)
    assert profile["calibration_gap"] == pytest.approx(0.0, abs=1e-9)
    assert profile["category"] == "CALIBRATED"
    assert profile["risk_level"] == "low"


def test_trust_score_mixes_appropriate_reliance_and_rce_on_a_hand_computed_table(api):
    # O (outcomes known, confidence 0.6): appropriate, not, appropriate, not -> AR = 0.5.
    calibrate(api, user="approve", confidence=0.6, outcome="approve")  # followed, AI right
    calibrate(api, user="approve", confidence=0.6, outcome="deny")  # followed, AI wrong -> OVER
    calibrate(api, user="deny", confidence=0.6, outcome="deny")  # overrode, AI wrong
    calibrate(api, user="deny", confidence=0.6, outcome="approve")  # overrode, AI right -> UNDER
    # C: bin [0.8, 1.0]: n=2, f=0.5, c=0.9; bin [0, 0.2): n=1, f=0, c=0.1.
    calibrate(api, user="approve", confidence=0.9)
    calibrate(api, user="deny", confidence=0.9)  # -> UNDER
    p = calibrate(api, user="deny", confidence=0.1)["user_profile"]
    rce = (2 / 3) * 0.4 + (1 / 3) * 0.1
    assert p["trust_score"] == pytest.approx((4 * 0.5 + 3 * (1 - rce)) / 7, abs=1e-6)  # 0.585714
    assert p["calibration_gap"] == pytest.approx((0 + 1 + 0 - 1 + 0.1 - 0.9 - 0.1) / 7, abs=1e-6)
    assert p["agreement_rate"] == pytest.approx(3 / 7, abs=1e-6)
    assert p["override_rate"] == pytest.approx(4 / 7, abs=1e-6)
    assert p["mean_ai_confidence"] == pytest.approx((4 * 0.6 + 0.9 + 0.9 + 0.1) / 7, abs=1e-6)
    assert p["overtrust_rate"] == pytest.approx(1 / 7, abs=1e-6)
    assert p["undertrust_rate"] == pytest.approx(2 / 7, abs=1e-6)
    assert p["overreliance_rate"] == pytest.approx(0.5)  # followed | AI wrong
    assert p["underreliance_rate"] == pytest.approx(0.5)  # overrode | AI right
    assert p["scored_decisions"] == 7 and p["outcomes_known"] == 4
    assert p["category"] == "INSUFFICIENT_DATA"


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
    assert p["decisions"] == 1


def test_late_outcome_moves_the_users_figures(api):
    calibrate(api, user="approve", confidence=0.9, decision_id="lo-1")
    assert api.post("/v1/log", {"decision_id": "lo-1", "outcome": "deny"}, format="json").status_code == 201
    p = calibrate(api, user="approve", confidence=0.9, outcome="approve")["user_profile"]
    assert p["outcomes_known"] == 2
    assert p["overtrust_rate"] == pytest.approx(0.5)  # lo-1 is now OVERTRUSTING
    assert p["trust_score"] == pytest.approx(0.5)  # AR over O: 1 of 2 appropriate


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
