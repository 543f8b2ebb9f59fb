"""The interval arithmetic of the calibration measures against independent libraries
(docs/reference/calibration.md): Student's t quantile (scipy), Newcombe's hybrid score interval of
the discrimination (statsmodels' confint_proportions_2indep, method "newcomb"), the joint
likelihood-ratio test of the confidence check (statsmodels' Logit), the trend's weighted
least-squares slope (statsmodels' WLS) and the organisation's interval for the process."""

import math
import random

import pytest
from scipy.stats import chi2
from scipy.stats import t as student_t
from statsmodels.discrete.discrete_model import Logit
from statsmodels.regression.linear_model import WLS
from statsmodels.stats.proportion import confint_proportions_2indep

from audit import measures, measures_stats
from calibration import confidence


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 7, 10, 19, 30, 61, 120])
def test_the_t_quantile_is_scipys(df):
    for probability in (0.9, 0.975, 0.995):
        assert measures_stats.t_quantile(probability, df) == pytest.approx(
            student_t.ppf(probability, df), rel=1e-12
        )


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2"),
    [(45, 50, 3, 20), (12, 40, 30, 40), (10, 10, 0, 10), (0, 15, 15, 15), (7, 23, 11, 31)],
)
def test_the_discrimination_interval_is_statsmodels_newcombe(k1, n1, k2, n2):
    p1, p2 = k1 / n1, k2 / n2
    delta, ci = measures.newcombe(p1, measures.wilson(p1, n1), p2, measures.wilson(p2, n2))
    low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
    assert delta == pytest.approx(p1 - p2)
    assert ci == pytest.approx([low, high], abs=1e-12)


def test_discrimination_is_youdens_j_of_following_and_null_under_ten_effective_decisions():
    th = measures.Thresholds()
    over = measures.Rate(0.2, 25.0, measures.wilson(0.2, 25.0))
    under = measures.Rate(0.1, 40.0, measures.wilson(0.1, 40.0))
    delta, ci = measures.discrimination(over, under, th)
    assert delta == pytest.approx(0.7)  # follows 90 % of advice to follow, 20 % of advice to override
    low, high = confint_proportions_2indep(36, 40, 5, 25, method="newcomb", compare="diff")
    assert ci == pytest.approx([low, high], abs=1e-12)
    thin = measures.Rate(0.2, 9.999999, measures.wilson(0.2, 9.999999))
    assert measures.discrimination(thin, under, th) == (pytest.approx(0.7), None)
    # Kish's n of ten equal weights can compute just under ten: it counts as ten.
    weights = [0.1] * 10
    kish = sum(weights) ** 2 / sum(w * w for w in weights)
    assert kish < 10
    assert measures.discrimination(measures.Rate(0.2, kish, [0.0, 0.5]), under, th)[1] is not None


def test_the_joint_likelihood_ratio_test_is_statsmodels_logit():
    rng = random.Random(3)
    rows = []
    for _ in range(800):
        c = rng.uniform(0.05, 0.95)
        p = 1 / (1 + math.exp(-(0.3 + 0.8 * math.log(c / (1 - c)))))
        rows.append((c, int(rng.random() < p)))
    check = confidence.confidence_check((c, y, 1) for c, y in rows)
    x = [[1.0, confidence.logit(c)] for c, _ in rows]
    model = Logit([y for _, y in rows], x)
    fit = model.fit(disp=0)
    statistic = 2 * (fit.llf - model.loglike([0.0, 1.0]))
    assert check["lr_statistic"] == pytest.approx(statistic, rel=1e-8)
    assert check["lr_p_value"] == pytest.approx(chi2.sf(statistic, 2), rel=1e-8)
    assert check["verdict"] == ("miscalibrated" if chi2.sf(statistic, 2) < 0.05 else "consistent")


def test_a_calibrated_confidence_passes_the_joint_test_about_95_percent_of_the_time():
    rng = random.Random(17)
    rejected = 0
    for _ in range(200):
        rows = [(c, int(rng.random() < c)) for c in (rng.uniform(0.05, 0.95) for _ in range(150))]
        rejected += confidence.confidence_check((c, y, 1) for c, y in rows)["verdict"] == "miscalibrated"
    assert rejected <= 0.09 * 200  # level 5 %: 10 expected, 18 or more has probability under 1 %


def test_the_recalibrated_confidence_is_the_fitted_logistic_with_c_clipped():
    recalibrated = measures_stats.recalibration(2.0, 0.5)
    for c in (0.0, 0.0005, 0.2, 0.5, 0.93, 1.0):
        clipped = min(0.999, max(0.001, c))
        expected = 1 / (1 + math.exp(-(2.0 + 0.5 * math.log(clipped / (1 - clipped)))))
        assert recalibrated(c) == pytest.approx(expected, rel=1e-14)


def test_the_trend_slope_and_its_standard_error_are_statsmodels_wls():
    rng = random.Random(5)
    points = [(float(i), rng.uniform(0, 0.3), float(rng.randint(5, 80))) for i in range(9)]
    slope, se = measures_stats.wls_slope(points)
    fit = WLS(
        [y for _, y, _ in points], [[1.0, x] for x, _, _ in points], weights=[w for _, _, w in points]
    ).fit()
    assert slope == pytest.approx(fit.params[1], rel=1e-10)
    assert se == pytest.approx(fit.bse[1], rel=1e-10)
    assert measures_stats.wls_slope(points[:2]) is None


def test_the_trend_direction_needs_four_periods_and_a_slope_beyond_its_interval():
    assert measures_stats.trend_direction((-0.1, 0.01), 3) == "undetermined"
    assert measures_stats.trend_direction(None, 0) == "undetermined"
    t = student_t.ppf(0.975, 3)
    assert measures_stats.trend_direction((-0.1, 0.1 / t * 0.999), 5) == "improving"
    assert measures_stats.trend_direction((-0.1, 0.1 / t * 1.001), 5) == "stable"
    assert measures_stats.trend_direction((0.1, 0.1 / t * 0.999), 5) == "declining"


def test_the_organisations_interval_is_the_wider_of_wilson_and_t_over_reviewers():
    # Reviewers (N_j, D_j): r = 6/12; v = 3/2 * ((4-2)^2 + 0 + (0-2)^2) / 144 = 1/12, k = 3.
    clusters = measures.Clusters.of([(4.0, 4.0), (2.0, 4.0), (0.0, 4.0)])
    rate, n_eff, ci = measures.weighted_rate(6.0, 12.0, 12.0, clusters)
    half = student_t.ppf(0.975, 2) * math.sqrt(1 / 12)  # 1.24: clipped to [0, 1]
    assert rate == 0.5 and n_eff == pytest.approx(3.0)
    assert ci == [max(0.0, 0.5 - half), min(1.0, 0.5 + half)] == [0.0, 1.0]
    # Many alike reviewers: the t interval is narrower than Wilson at Kish's n, which stands.
    alike = measures.Clusters.of([(2.0, 4.0)] * 50)
    _, _, ci = measures.weighted_rate(100.0, 200.0, 200.0 * 1.0, alike)
    assert ci == pytest.approx(measures.wilson(0.5, 200.0))
    # One reviewer: Wilson at Kish's n.
    one = measures.Clusters.of([(3.0, 10.0)])
    assert measures.weighted_rate(3.0, 10.0, 10.0, one)[2] == measures.wilson(0.3, 10.0)
