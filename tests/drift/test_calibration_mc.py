"""Calibration of h from a target ARL0 (docs/reference/drift.md, Calibration): the worked
example, the conformance rule against two independent estimates (a Markov-chain approximation and
a plain simulation with another generator), reproducibility, the spread of h between seeds, and
ARL1 at the ratios the chart watches for."""

import math

import numpy as np
import pytest

from drift.calibration import calibrate, out_of_control_ratios
from drift.charts import fit_follow_model, follow_probability
from tests.drift.markov import markov_arl


def worked_example_mix() -> list[float]:
    fit = fit_follow_model([(0.3, 1)] * 30 + [(0.3, 0)] * 70 + [(0.9, 1)] * 90 + [(0.9, 0)] * 10)
    return [follow_probability(fit, c) for c in [0.3] * 100 + [0.9] * 100]


def plain_simulation(case_mix, odds_ratio, h, runs, seed, true_ratio=1.0, cap=10**7):
    """Run lengths one step at a time for all runs, with the legacy Mersenne Twister generator:
    the independent simulation of the conformance rule. Returns (mean, standard error)."""
    rng = np.random.RandomState(seed)
    p = np.asarray(case_mix, dtype=float)
    q = true_ratio * p / (1 - p + true_ratio * p)
    x, lengths, alive, step = np.zeros(runs), np.zeros(runs), np.arange(runs), 0
    while alive.size and step < cap:
        step += 1
        i = rng.randint(0, p.size, alive.size)
        e = rng.random_sample(alive.size) < q[i]
        x[alive] = np.maximum(0.0, x[alive] + e * math.log(odds_ratio) - np.log(1 - p[i] + odds_ratio * p[i]))
        done = x[alive] >= h
        lengths[alive[done]] = step
        alive = alive[~done]
    return float(lengths.mean()), float(lengths.std(ddof=1) / math.sqrt(runs))


def conforms(result, target, mean, se):
    s = math.sqrt((result.arl0_se / result.arl0) ** 2 + (se / mean) ** 2)
    return target * math.exp(-4.5 * s) <= mean <= target * math.exp(4.5 * s)


def test_the_worked_example_at_20000_runs():
    mix = worked_example_mix()
    result = calibrate(mix, odds_ratio=2.0, arl0_target=200, runs=20_000, seed=7)
    # h = 2.054 with the generator of the printed example; another stream of 20,000 runs differs
    # by a standard deviation of about 0.005
    assert abs(result.h - 2.054) <= 0.02
    assert result.h == round(result.h, 3) and result.arl0 >= 200
    assert 200 <= result.arl0 <= 200 + 4 * result.arl0_se
    assert round(markov_arl(mix, 2.0, 2.054)) in range(199, 204)  # "a Markov chain gives 201"
    assert conforms(result, 200, markov_arl(mix, 2.0, result.h), 0.0)
    # ARL1 at R = 2 and 3, against the Markov chain at the returned h (its error about 1 %)
    assert result.arl1_r2 == pytest.approx(markov_arl(mix, 2.0, result.h, 2.0), rel=0.03)
    assert result.arl1_r3 == pytest.approx(markov_arl(mix, 2.0, result.h, 3.0), rel=0.03)
    assert 39.5 < result.arl1_r2 < 41.5 and 24.0 < result.arl1_r3 < 25.5


CASES = [
    # (case mix, R_A, target, seed)
    pytest.param("worked", 2.0, 200, 1, id="worked example"),
    pytest.param("uniform", 3.0, 1000, 2, id="AI calibration, uniform confidences, R=3"),
    pytest.param("skewed", 0.5, 500, 3, id="R=1/2 watching the event become rarer"),
    pytest.param("reliance", 2.0, 2000, 4, id="a fitted reliance baseline"),
]


def case_mix(name: str) -> list[float]:
    rng = np.random.default_rng(11)
    if name == "worked":
        return worked_example_mix()
    if name == "uniform":
        return list(1 - rng.uniform(0.5, 0.99, 300))  # ai_calibration_up: P = 1 - c
    if name == "skewed":
        return list(rng.beta(8, 2, 500))
    c = rng.uniform(0.2, 0.95, 400)
    f = rng.random(400) < 1 / (1 + np.exp(-(-2 + 4 * c)))
    fit = fit_follow_model(list(zip(c.tolist(), f.tolist(), strict=True)))
    return [follow_probability(fit, v) for v in c]


@pytest.mark.parametrize(("mix", "odds_ratio", "target", "seed"), CASES)
def test_the_calibration_conforms_to_independent_estimates(mix, odds_ratio, target, seed):
    p = case_mix(mix)
    result = calibrate(p, odds_ratio=odds_ratio, arl0_target=target, runs=2000, seed=seed)
    assert result.h > 0 and result.arl0 >= target
    mean, se = plain_simulation(p, odds_ratio, result.h, 2000, seed + 1000)
    assert conforms(result, target, mean, se), (result, mean, se)
    assert conforms(result, target, markov_arl(p, odds_ratio, result.h), 0.0)
    # h is the smallest multiple of 0.001 reaching the target: 0.05 lower is clearly below it
    assert markov_arl(p, odds_ratio, result.h - 0.05) < target
    low, high = out_of_control_ratios(odds_ratio)
    for ratio, arl1, arl1_se in (
        (low, result.arl1_r2, result.arl1_r2_se),
        (high, result.arl1_r3, result.arl1_r3_se),
    ):
        reference = markov_arl(p, odds_ratio, result.h, ratio)
        assert abs(arl1 - reference) <= 4.5 * arl1_se + 0.015 * reference, (ratio, arl1, reference)
    assert result.arl1_r3 < result.arl1_r2 < result.arl0


def test_the_ratios_follow_the_direction_the_chart_watches():
    assert out_of_control_ratios(2.0) == (2.0, 3.0)
    assert out_of_control_ratios(0.5) == (0.5, 1 / 3)


def test_a_calibration_is_reproducible_and_its_seed_matters():
    mix = worked_example_mix()
    first = calibrate(mix, odds_ratio=2.0, arl0_target=300, runs=1000, seed=42)
    assert calibrate(mix, odds_ratio=2.0, arl0_target=300, runs=1000, seed=42) == first
    others = {calibrate(mix, odds_ratio=2.0, arl0_target=300, runs=1000, seed=s).h for s in (43, 44, 45)}
    assert others - {first.h}
    figures = first.figures()
    assert set(figures) == {
        "odds_ratio", "arl0_target", "runs", "seed", "baseline_decisions", "h", "arl0", "arl0_se",
        "arl1_r2", "arl1_r2_se", "arl1_r3", "arl1_r3_se",
    }  # fmt: skip
    assert figures["h"] == round(first.h, 3) and figures["arl0"] == round(first.arl0, 1)
    assert figures["baseline_decisions"] == 200


def test_h_from_2000_runs_varies_with_its_seed_by_about_0_015():
    mix = worked_example_mix()
    hs = [calibrate(mix, odds_ratio=2.0, arl0_target=200, runs=2000, seed=s).h for s in range(16)]
    assert abs(np.mean(hs) - 2.054) < 0.015
    assert 0.007 < np.std(hs, ddof=1) < 0.03


def test_a_case_mix_that_cannot_rise_runs_to_the_cap():
    # every P = 0 with R > 1: the event never happens, W = 0 and X never leaves 0
    result = calibrate([0.0] * 60, odds_ratio=2.0, arl0_target=100, runs=1000, seed=1)
    assert result.h == 0.001 and result.arl0 == 2000 and result.arl0_se == 0.0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        calibrate([], odds_ratio=2.0, arl0_target=100, runs=1000, seed=1)
    with pytest.raises(ValueError):
        calibrate([1.2], odds_ratio=2.0, arl0_target=100, runs=1000, seed=1)
    with pytest.raises(ValueError):
        calibrate([0.5], odds_ratio=1.0, arl0_target=100, runs=1000, seed=1)
