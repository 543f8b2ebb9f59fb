"""Validity of the calibration measures (docs/reference/calibration.md), not only their arithmetic:
a seeded simulation of six reviewer types with known ground truth, computed through the same pure
functions the service uses (`audit.measures`: each decision's contribution, then the figures from
the sums), and the figures checked against independent libraries (statsmodels)."""

import math
import random

import pytest
from statsmodels.discrete.discrete_model import Logit
from statsmodels.stats.proportion import proportion_confint

from audit import measures
from calibration import confidence

TH = measures.Thresholds()


def follows(kind: str, c: float, rng: random.Random) -> bool:
    """Whether a reviewer of `kind` follows advice at confidence c."""
    if kind == "calibrated":  # follows exactly when the AI is more likely right
        return c > 0.5
    if kind == "probability_matching":  # follows as often as the AI is right
        return rng.random() < c
    if kind == "random":  # follows 65 % of the time whatever the confidence
        return rng.random() < 0.65
    if kind == "rubber_stamp":
        return True
    if kind == "over_truster":  # follows confident advice, and 80 % of unsure advice
        return c > 0.5 or rng.random() < 0.8
    if kind == "under_truster":  # overrides unsure advice, and half of confident advice
        return c > 0.5 and rng.random() < 0.5
    raise AssertionError(kind)


# Each type's true over- and under-trust rates on a calibrated AI with confidences uniform on
# [0.02, 0.98]: probability matching follows unsure advice at its confidence c, so its over-trust rate
# is E[c (1 - 2c)] / E[1 - 2c] = 1/6 on [0, 0.5], and likewise its under-trust rate.
TRUE_RATES = {
    "calibrated": (0.0, 0.0),
    "probability_matching": (1 / 6, 1 / 6),
    "random": (0.65, 0.35),
    "rubber_stamp": (1.0, 0.0),
    "over_truster": (0.8, 0.0),
    "under_truster": (0.0, 0.5),
}
# The categories each type has in truth; probability matching sits between CALIBRATED and
# INSUFFICIENT_DATA (its rates are near the thresholds), so it has none to find. Discrimination
# Delta = (1 - under) - over: 0 for random following and for the rubber stamp (NON_DISCRIMINATING),
# 0.2 for the over-truster, whose over-flag also holds (either flag is right).
TRUTH = {
    "calibrated": {measures.CALIBRATED},
    "probability_matching": None,
    "random": {measures.NON_DISCRIMINATING},
    "rubber_stamp": {measures.NON_DISCRIMINATING},
    "over_truster": {measures.OVERTRUSTING, measures.NON_DISCRIMINATING},
    "under_truster": {measures.UNDERTRUSTING},
}


def decisions(kind: str, n: int, outcomes: float, rng: random.Random) -> list[measures.Record]:
    """n decisions of a reviewer of `kind` on advice of a calibrated AI (right with probability c),
    the outcome known for a share `outcomes` of them."""
    out = []
    for _ in range(n):
        c = round(rng.uniform(0.02, 0.98), 4)
        right = rng.random() < c
        f = follows(kind, c, rng)
        outcome = None
        if rng.random() < outcomes:
            outcome = "approve" if right else "deny"
        record = {
            "ai_recommendation": "approve",
            "user_decision": "approve" if f else "deny",
            "confidence": c,
        }
        category = measures.record_category(**record, outcome=outcome)
        out.append(measures.Record(**record, outcome=outcome, initial_decision=None, category=category))
    return out


def sums_of(records: list[measures.Record]) -> dict[str, float]:
    return measures.add_sums(measures.contribution(r) for r in records)


def wrong_flag(kind: str, category: str) -> bool:
    """A flag the truth does not bear out: OVERTRUSTING where the true over-trust rate is at or under
    its threshold, UNDERTRUSTING likewise, NON_DISCRIMINATING where the true discrimination is at
    or above its threshold and the two flags do not both hold in truth."""
    over, under = TRUE_RATES[kind]
    both = over > TH.overtrust and under > TH.undertrust
    if category == measures.OVERTRUSTING:
        return over <= TH.overtrust
    if category == measures.UNDERTRUSTING:
        return under <= TH.undertrust
    if category == measures.NON_DISCRIMINATING:
        return (1 - under) - over >= TH.discrimination and not both
    return False


def figures_of(records: list[measures.Record]) -> dict:
    return measures.figures(sums_of(records), TH)


REVIEWERS = 40  # per type and condition


@pytest.mark.parametrize("outcomes", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("n", [200, 1000])
def test_six_reviewer_types_are_told_apart_with_at_most_1_percent_wrong_flags(n, outcomes):
    rng = random.Random(f"{n}-{outcomes}")
    wrong = total = 0
    for kind, truth in TRUTH.items():
        found = [figures_of(decisions(kind, n, outcomes, rng))["category"] for _ in range(REVIEWERS)]
        wrong += sum(1 for category in found if wrong_flag(kind, category))
        total += len(found)
        right = sum(1 for category in found if truth is not None and category in truth)
        if truth is not None and n == 1000:
            assert right / len(found) >= 0.9, (kind, found)
        if truth is not None and n == 200:
            assert right / len(found) >= 0.75, (kind, found)
    assert wrong <= 0.01 * total


def test_shuffling_who_followed_drives_skill_to_zero_and_widens_the_gap():
    rng = random.Random(7)
    records = decisions("calibrated", 2000, 0.1, rng)
    before = figures_of(records)
    followed = [r.user_decision for r in records]
    rng.shuffle(followed)
    shuffled = []
    for r, decision in zip(records, followed, strict=True):
        category = measures.record_category(
            ai_recommendation=r.ai_recommendation,
            user_decision=decision,
            confidence=r.confidence,
            outcome=r.outcome,
        )
        shuffled.append(
            measures.Record(r.ai_recommendation, decision, r.confidence, r.outcome, None, category)
        )
    after = figures_of(shuffled)
    assert before["reliance_skill"] > 0.9
    assert abs(after["reliance_skill"]) < 0.1
    assert after["reliance_gap"] > before["reliance_gap"] + 0.1
    assert after["category"] != measures.CALIBRATED


def test_a_periods_scores_are_the_decision_weighted_means_of_its_days():
    rng = random.Random(11)
    days = [decisions(kind, rng.randint(5, 60), 0.3, rng) for kind in TRUTH for _ in range(5)]
    # Some outcome-only decisions, whose attainable score needs the window's AI accuracy.
    for day in days[::3]:
        day.append(measures.Record("approve", "approve", None, "deny", None, measures.OVERTRUSTING))
    window = measures.add_sums(sums_of(day) for day in days)
    pi = measures.accuracy(window)
    whole = measures.figures(window, TH)
    parts = [measures.figures(sums_of(day), TH, pi=pi, skill=False) for day in days]
    weight = sum(p["scored_decisions"] for p in parts)
    for key in ("trust_score", "attainable_score", "reliance_gap"):
        mean = sum(p[key] * p["scored_decisions"] for p in parts) / weight
        assert mean == pytest.approx(whole[key], abs=1e-15)


@pytest.mark.parametrize(("rate", "n"), [(0.4, 1 / 0.52), (0.0, 12.5), (1.0, 3.3), (0.25, 812.7), (0.5, 2.0)])
def test_the_wilson_interval_is_statsmodels_at_a_fractional_effective_n(rate, n):
    low, high = proportion_confint(rate * n, n, alpha=0.05, method="wilson")
    assert measures.wilson(rate, n) == pytest.approx([low, high], abs=1e-12)


def test_the_cox_fit_is_statsmodels_logit():
    rng = random.Random(3)
    rows = []
    for _ in range(600):
        c = rng.uniform(0.05, 0.95)
        p = 1 / (1 + math.exp(-(0.4 + 0.7 * math.log(c / (1 - c)))))
        rows.append((c, int(rng.random() < p)))
    check = confidence.confidence_check((c, y, 1) for c, y in rows)
    x = [[1.0, confidence.logit(c)] for c, _ in rows]
    fit = Logit([y for _, y in rows], x).fit(disp=0)
    (a_low, a_high), (b_low, b_high) = fit.conf_int(alpha=0.05).tolist()
    assert check["intercept"] == pytest.approx(fit.params[0], abs=1e-8)
    assert check["slope"] == pytest.approx(fit.params[1], abs=1e-8)
    assert check["intercept_ci"] == pytest.approx([a_low, a_high], abs=1e-6)
    assert check["slope_ci"] == pytest.approx([b_low, b_high], abs=1e-6)
    assert check["brier_score"] == pytest.approx(sum((c - y) ** 2 for c, y in rows) / len(rows))
    assert check["verdict"] == "miscalibrated"  # intercept 0.4, slope 0.7


def test_a_calibrated_confidence_is_consistent_and_few_decisions_are_not_checked():
    rng = random.Random(5)
    rows = [(c, int(rng.random() < c)) for c in (rng.uniform(0.05, 0.95) for _ in range(2000))]
    assert confidence.confidence_check((c, y, 1) for c, y in rows)["verdict"] == "consistent"
    assert confidence.confidence_check((c, y, 1) for c, y in rows[:99])["verdict"] == "not_checked"
    # All outcomes alike: no finite fit.
    assert confidence.confidence_check([(0.7, 1, 150)])["verdict"] == "not_checked"


def test_the_clustered_effective_n_is_the_ratio_estimators_variance_by_hand():
    # Reviewers (N_j, D_j): r = 6/12; v = 3/2 * ((4-2)^2 + (2-2)^2 + (0-2)^2) / 144 = 1/12.
    clusters = measures.Clusters.of([(4.0, 4.0), (2.0, 4.0), (0.0, 4.0)])
    rate, n_eff, _ = measures.weighted_rate(6.0, 12.0, 12.0 * 100, clusters)  # Kish alone would be 0.12
    assert rate == 0.5 and n_eff == pytest.approx(0.12)
    rate, n_eff, _ = measures.weighted_rate(6.0, 12.0, 12.0, clusters)  # Kish 12 > r(1-r)/v = 3
    assert n_eff == pytest.approx(3.0)
