"""The baseline follow model (docs/reference/drift.md, Baseline and follow model): the worked
example, the maximum-likelihood fit against statsmodels' Logit, the augmented fit against a
frequency-weighted statsmodels GLM, the intercept-only rule, and which rule the data choose."""

import math
import random

import numpy as np
import pytest
import statsmodels.api as sm

from drift.charts import (
    AUGMENTED,
    INTERCEPT_ONLY,
    MLE,
    Fit,
    fit_follow_model,
    follow_probability,
    in_control_probability,
)


def saturated_baseline() -> list[tuple[float, int]]:
    """100 points at c = 0.3 with 30 followed and 100 at c = 0.9 with 90 followed."""
    return [(0.3, 1)] * 30 + [(0.3, 0)] * 70 + [(0.9, 1)] * 90 + [(0.9, 0)] * 10


def test_the_worked_example_is_the_saturated_model():
    fit = fit_follow_model(saturated_baseline())
    assert fit == Fit(method=MLE, intercept=-2.369559, slope=5.074204, followed=120)
    assert fit.as_dict() == {"method": "mle", "intercept": -2.369559, "slope": 5.074204, "followed": 120}
    assert follow_probability(fit, 0.3) == pytest.approx(0.3, abs=1e-6)
    assert follow_probability(fit, 0.9) == pytest.approx(0.9, abs=1e-6)
    b = (math.log(0.9 / 0.1) - math.log(0.3 / 0.7)) / 0.6
    assert fit.slope == round(b, 6) and fit.intercept == round(math.log(0.3 / 0.7) - 0.3 * b, 6)


def reviewer_baseline(seed: int, n: int, a: float, b: float) -> list[tuple[float, int]]:
    rng = random.Random(seed)
    points = []
    for _ in range(n):
        c = round(rng.uniform(0.05, 0.99), 2)
        points.append((c, int(rng.random() < 1 / (1 + math.exp(-(a + b * c))))))
    return points


@pytest.mark.parametrize(
    ("seed", "n", "a", "b"),
    [
        (1, 50, -1.0, 3.0),
        (2, 200, -2.0, 5.0),
        (3, 1000, 0.5, 1.0),
        (4, 10_000, -3.0, 7.0),
        (5, 80, 2.0, -1.5),
    ],
)
def test_the_mle_is_statsmodels_logit_to_a_millionth(seed, n, a, b):
    points = reviewer_baseline(seed, n, a, b)
    fit = fit_follow_model(points)
    assert fit.method == MLE
    assert fit.followed == sum(f for _, f in points)
    c = np.array([p[0] for p in points])
    f = np.array([p[1] for p in points])
    reference = sm.Logit(f, sm.add_constant(c)).fit(disp=0, tol=1e-12, maxiter=200).params
    assert abs(fit.intercept - reference[0]) <= 1e-6
    assert abs(fit.slope - reference[1]) <= 1e-6
    # rounded to 6 places, and those are the values the chart uses
    assert fit.intercept == round(fit.intercept, 6) and fit.slope == round(fit.slope, 6)
    c0 = points[0][0]
    assert follow_probability(fit, c0) == 1 / (1 + math.exp(-(fit.intercept + fit.slope * c0)))


def augmented_reference(points: list[tuple[float, int]]) -> tuple[float, float]:
    """statsmodels' binomial GLM on the points plus four half-weight pseudo-points."""
    low, high = min(c for c, _ in points), max(c for c, _ in points)
    rows = [*points, (low, 1), (low, 0), (high, 1), (high, 0)]
    weights = np.array([1.0] * len(points) + [0.5] * 4)
    c = np.array([r[0] for r in rows])
    f = np.array([r[1] for r in rows])
    model = sm.GLM(f, sm.add_constant(c), family=sm.families.Binomial(), freq_weights=weights)
    params = model.fit(tol=1e-13, maxiter=200).params
    return float(params[0]), float(params[1])


def separated(n: int, cut: float, followed_above: bool, tie: bool) -> list[tuple[float, int]]:
    rng = random.Random(n)
    points = []
    for _ in range(n):
        c = round(rng.uniform(0.1, 0.95), 3)
        points.append((c, int((c > cut) == followed_above)))
    if tie:  # quasi-separation: both outcomes at the cut itself
        points += [(cut, 1), (cut, 0)]
    return points


@pytest.mark.parametrize(
    "points",
    [
        pytest.param([(c / 100, 1) for c in range(30, 90)], id="all followed"),
        pytest.param([(c / 100, 0) for c in range(30, 90)], id="none followed"),
        pytest.param([(0.2, 0)] * 40 + [(0.8, 1)] * 40, id="two confidences, separated"),
        pytest.param(separated(300, 0.6, True, False), id="separated by confidence"),
        pytest.param(separated(300, 0.6, False, False), id="separated, following below"),
        pytest.param(separated(300, 0.6, True, True), id="quasi-separated"),
        pytest.param([(0.5, 1)] * 60 + [(0.7, 1)] * 3, id="one outcome, two confidences"),
    ],
)
def test_without_overlap_the_fit_is_augmented_and_is_the_weighted_glm(points):
    fit = fit_follow_model(points)
    assert fit.method == AUGMENTED
    a, b = augmented_reference(points)
    assert abs(fit.intercept - a) <= 1e-6
    assert abs(fit.slope - b) <= 1e-6
    assert fit.followed == sum(f for _, f in points)


@pytest.mark.parametrize(("followed", "n"), [(0, 50), (50, 50), (17, 60), (30, 60)])
def test_a_single_confidence_gives_the_rule_of_succession(followed, n):
    points = [(0.8, 1)] * followed + [(0.8, 0)] * (n - followed)
    fit = fit_follow_model(points)
    rate = (followed + 1) / (n + 2)
    assert fit == Fit(INTERCEPT_ONLY, round(math.log(rate / (1 - rate)), 6) + 0.0, 0.0, followed)
    assert follow_probability(fit, 0.1) == follow_probability(fit, 0.99)
    assert str(fit.intercept) != "-0.0"


def test_the_rule_is_the_datas_overlap_not_the_iterations():
    # Overlap needs the highest overridden confidence strictly above the lowest followed one:
    # touching at one confidence with one outcome on each side is (quasi-)separation.
    touching = [(0.4, 0), (0.5, 0), (0.6, 1), (0.7, 1), (0.6, 0)]
    assert fit_follow_model(touching).method == AUGMENTED
    assert fit_follow_model([*touching, (0.65, 0)]).method == MLE
    assert fit_follow_model([(0.4, 1), (0.5, 1), (0.5, 0), (0.6, 0)]).method == AUGMENTED
    assert fit_follow_model([(0.4, 1), (0.5, 1), (0.6, 0), (0.45, 0)]).method == MLE
    # a nearly separated baseline with a large but finite MLE stays `mle`
    nearly = [(0.30, 0)] * 40 + [(0.70, 1)] * 40 + [(0.69, 0), (0.31, 1)]
    fit = fit_follow_model(nearly)
    c = np.array([p[0] for p in nearly])
    f = np.array([p[1] for p in nearly])
    reference = sm.Logit(f, sm.add_constant(c)).fit(disp=0, tol=1e-12, maxiter=500).params
    assert fit.method == MLE
    assert abs(fit.slope - reference[1]) <= 1e-6 and abs(fit.intercept - reference[0]) <= 1e-6


def test_the_reliance_charts_probabilities_come_from_the_fit():
    fit = fit_follow_model(saturated_baseline())
    pi = follow_probability(fit, 0.3)
    assert in_control_probability("over_reliance", 0.3, fit) == pi
    assert in_control_probability("under_reliance", 0.3, fit) == 1 - pi
    assert in_control_probability("ai_calibration_up", 0.3) == 0.7
    assert in_control_probability("ai_calibration_down", 0.3) == 0.3
    with pytest.raises(ValueError, match="baseline fit"):
        in_control_probability("over_reliance", 0.3)
    with pytest.raises(ValueError, match="not a CUSUM chart"):
        in_control_probability("probe_sprt", 0.3, fit)


def test_an_extreme_fit_evaluates_to_the_limits_without_clipping():
    fit = Fit(MLE, -800.0, 10.0, 1)
    assert follow_probability(fit, 0.5) == 0.0
    assert follow_probability(Fit(MLE, 800.0, 10.0, 1), 0.5) == 1.0
    with pytest.raises(ValueError):
        fit_follow_model([])
