"""The CUSUM and SPRT arithmetic (docs/reference/drift.md, The charts): the worked examples to the
printed digits, exact alarm points on hand-built sequences, and agreement with an independent
NumPy implementation on random sequences; the excess and severity of an alarm's run."""

import math

import numpy as np
import pytest

from drift.charts import (
    SIGNAL_ALLOWANCE,
    Sprt,
    cusum_step,
    cusum_weight,
    event,
    excess_term,
    fit_follow_model,
    in_control_probability,
    severity,
    sprt_step,
)


def run_chart(points, odds_ratio, h, restart_after=()):
    """Drive the CUSUM over (e, P) points as a monitor does: X restarts at 0 after a signal and
    after the points listed in `restart_after` (an acknowledgement). Returns (x per point, the
    1-based indexes of the signals, alarms: signals with no open alarm)."""
    x, xs, signal_at, alarms, open_alarm = 0.0, [], [], [], False
    for index, (e, p) in enumerate(points, start=1):
        point = cusum_step(x, e, p, odds_ratio, h)
        xs.append(point.x)
        x = point.x
        if point.signal:
            signal_at.append(index)
            if not open_alarm:
                alarms.append(index)
                open_alarm = True
            x = 0.0
        if index in restart_after:
            open_alarm, x = False, 0.0
    return xs, signal_at, alarms


def test_the_cusum_worked_example():
    fit = fit_follow_model([(0.3, 1)] * 30 + [(0.3, 0)] * 70 + [(0.9, 1)] * 90 + [(0.9, 0)] * 10)
    p = in_control_probability("over_reliance", 0.3, fit)
    e = event("over_reliance", followed=True)
    assert round(cusum_weight(e, p, 2.0), 6) == 0.430783
    points = [(e, p)] * 40
    xs, signals, alarms = run_chart(points, 2.0, 4.0)
    assert round(xs[8], 6) == 3.877046 and round(xs[9], 6) == 4.307829
    assert alarms == [10] and signals[:2] == [10, 20]  # the open alarm's `signals` is 2 at 20
    _, signals, alarms = run_chart(points, 2.0, 4.0, restart_after={24})
    assert alarms == [10, 34] and signals == [10, 20, 34]
    assert run_chart(points, 2.0, 4.0)[1][:3] == [10, 20, 30]  # without the acknowledgement


def test_events_and_probabilities_of_each_chart():
    assert event("over_reliance", followed=True) == 1 and event("under_reliance", followed=True) == 0
    assert (
        event("ai_calibration_up", ai_right=False) == 1 and event("ai_calibration_down", ai_right=False) == 0
    )
    assert event("probe_sprt", followed=True) == 1
    with pytest.raises(ValueError):
        event("ai_calibration_up", followed=True)
    with pytest.raises(ValueError):
        event("team_reliance", followed=True)


def test_hand_built_sequences_alarm_at_the_exact_point():
    # ai_calibration_up at c = 0.5 with R = 2: the AI wrong adds ln 2 - ln 1.5 = 0.287682, right
    # subtracts ln 1.5 = 0.405465.
    p = in_control_probability("ai_calibration_up", 0.5)
    wrong, right = (1, p), (0, p)
    assert run_chart([wrong] * 4, 2.0, 1.0)[2] == [4]  # 0.287682 x 4 = 1.150728
    assert run_chart([wrong] * 3, 2.0, 1.0)[2] == []  # 0.863046
    # a right answer between pulls X down; the floor at 0 forgets what went before
    assert run_chart([right] * 50 + [wrong] * 4, 2.0, 1.0)[2] == [54]
    assert run_chart([wrong, wrong, right, wrong, wrong, wrong], 2.0, 1.0)[2] == [6]  # 0.169899 + 0.863046
    # R < 1 watches the event becoming rarer: the AI right more often than its confidence says
    down = in_control_probability("ai_calibration_down", 0.5)
    assert run_chart([(0, down)] * 5, 0.5, 1.0)[2] == [4]


def test_the_signal_allowance_decides_ties_between_evaluation_orders():
    w = cusum_weight(1, 0.3, 2.0)
    two = cusum_step(cusum_step(0.0, 1, 0.3, 2.0, 99).x, 1, 0.3, 2.0, 99).x
    three = cusum_step(two, 1, 0.3, 2.0, 99).x
    # X within 1e-9 below h signals (another evaluation order may land just above h)
    assert cusum_step(two, 1, 0.3, 2.0, three + SIGNAL_ALLOWANCE / 2).signal
    assert not cusum_step(two, 1, 0.3, 2.0, three + 2 * SIGNAL_ALLOWANCE).signal
    assert cusum_step(0.0, 1, 0.3, 2.0, w + SIGNAL_ALLOWANCE / 2).signal
    assert not cusum_step(0.0, 1, 0.3, 2.0, w + 2 * SIGNAL_ALLOWANCE).signal


def test_the_calibration_down_chart_is_steiners_lower_chart_on_failures():
    for c in np.linspace(0.0, 1.0, 21):
        for y in (0, 1):
            down = cusum_weight(event("ai_calibration_down", ai_right=bool(y)), c, 2.0)
            lower = cusum_weight(1 - y, 1 - c, 0.5)  # failures, R = 1/2
            assert down == pytest.approx(lower, abs=1e-15)


def numpy_cusum(e: np.ndarray, p: np.ndarray, odds_ratio: float, h: float) -> tuple[np.ndarray, list[int]]:
    """An independent implementation: W in NumPy, and each run between restarts as the running
    sum minus its running minimum floored at 0 (the closed form of the max(0, .) recursion)."""
    w = np.where(e == 1, np.log(odds_ratio), 0.0) - np.log1p(p * (odds_ratio - 1.0))
    xs, signals, start = np.empty(len(w)), [], 0
    while start < len(w):
        s = np.cumsum(w[start:])
        x = s - np.minimum(np.minimum.accumulate(s), 0.0)
        hit = np.flatnonzero(x >= h - 1e-9)
        end = int(hit[0]) + 1 if hit.size else len(x)
        xs[start : start + end] = x[:end]
        if hit.size:
            signals.append(start + end)
        start += end
    return xs, signals


@pytest.mark.parametrize("seed", range(8))
def test_the_cusum_agrees_with_an_independent_numpy_implementation(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    odds_ratio = [2.0, 3.0, 0.5, 1.5, 0.25, 10.0, 2.0, 0.8][seed]
    p = rng.uniform(0.01, 0.99, n)
    shifted = odds_ratio * p / (1 - p + odds_ratio * p)
    # in control for a third, then the shift the chart watches for, then in control again
    truth = np.concatenate([p[:1000], shifted[1000:2000], p[2000:]])
    e = (rng.random(n) < truth).astype(int)
    h = float(rng.uniform(1.5, 5.0))
    xs, signals, _ = run_chart(list(zip(e.tolist(), p.tolist(), strict=True)), odds_ratio, h)
    expected_xs, expected_signals = numpy_cusum(e, p, odds_ratio, h)
    assert signals == expected_signals and len(signals) > 0
    assert np.max(np.abs(np.array(xs) - expected_xs)) < 1e-10


def test_the_sprt_worked_example():
    sprt = Sprt()
    assert [round(v, 6) for v in (sprt.miss_llr, sprt.catch_llr)] == [1.098612, -0.251314]
    assert [round(v, 6) for v in (sprt.upper_bound, sprt.lower_bound)] == [2.890372, -2.251292]
    assert (round(sprt.asn_h0, 1), round(sprt.asn_h1, 1)) == (17.1, 15.5)
    s, conclusions = 0.0, []
    for missed in [1, 1, 1] + [0] * 9:
        point = sprt_step(sprt, s, missed)
        s = 0.0 if point.conclusion else point.llr_sum
        conclusions.append((point.conclusion, round(point.llr_sum, 6)))
    assert conclusions[2] == ("h1", 3.295837)
    assert conclusions[11] == ("h0", -2.26183)
    assert all(c is None for c, _ in conclusions[:2] + conclusions[3:11])


def test_the_sprt_parameters_are_walds():
    sprt = Sprt(p0=0.05, p1=0.2, alpha=0.01, beta=0.2)
    assert sprt.upper_bound == math.log(0.8 / 0.01) and sprt.lower_bound == math.log(0.2 / 0.99)
    assert sprt.increment(True) == math.log(4) and sprt.increment(False) == math.log(0.8 / 0.95)
    assert sprt.conclusion(sprt.upper_bound - SIGNAL_ALLOWANCE / 2) == "h1"
    assert sprt.conclusion(sprt.lower_bound + SIGNAL_ALLOWANCE / 2) == "h0"
    assert sprt.conclusion(0.0) is None


def numpy_sprt(missed: np.ndarray, sprt: Sprt) -> list[tuple[int, str]]:
    z = np.where(missed == 1, np.log(sprt.p1 / sprt.p0), np.log((1 - sprt.p1) / (1 - sprt.p0)))
    upper, lower = np.log((1 - sprt.beta) / sprt.alpha), np.log(sprt.beta / (1 - sprt.alpha))
    out, start = [], 0
    while start < len(z):
        s = np.cumsum(z[start:])
        hit = np.flatnonzero((s >= upper - 1e-9) | (s <= lower + 1e-9))
        if not hit.size:
            break
        out.append((start + int(hit[0]) + 1, "h1" if s[hit[0]] > 0 else "h0"))
        start += int(hit[0]) + 1
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_sprt_agrees_with_an_independent_numpy_implementation(seed):
    rng = np.random.default_rng(100 + seed)
    sprt = [Sprt(), Sprt(0.05, 0.25, 0.05, 0.05), Sprt(0.2, 0.4, 0.1, 0.1)][seed % 3]
    missed = (rng.random(2000) < [0.08, 0.3, 0.2, 0.12, 0.3, 0.25][seed]).astype(int)
    s, conclusions = 0.0, []
    for index, m in enumerate(missed.tolist(), start=1):
        point = sprt_step(sprt, s, m)
        s = 0.0 if point.conclusion else point.llr_sum
        if point.conclusion:
            conclusions.append((index, point.conclusion))
    assert conclusions == numpy_sprt(missed, sprt) and len(conclusions) > 20


def test_a_seeded_sprt_keeps_walds_error_rates_and_overshoots_his_sample_sizes():
    # Ground truth known: 20,000 tests under H0 (miss rate 0.10) and under H1 (0.30).
    sprt, rng = Sprt(), np.random.default_rng(7)
    for rate, wrong, bound in ((0.10, "h1", 0.05), (0.30, "h0", 0.10)):
        lengths, errors = [], 0
        for _ in range(20_000):
            s, n, conclusion = 0.0, 0, None
            while conclusion is None:
                n += 1
                point = sprt_step(sprt, s, rng.random() < rate)
                s, conclusion = point.llr_sum, point.conclusion
            lengths.append(n)
            errors += conclusion == wrong
        # Wald: the error rates are at most about alpha and beta (binomial error 0.2 points)
        assert errors / 20_000 <= bound + 0.006
        mean = float(np.mean(lengths))
        asn = sprt.asn_h0 if rate == 0.10 else sprt.asn_h1
        # the overshoot at the bound: about 8 % more probes under H0, 19 % under H1
        ratio = mean / asn
        assert (1.03 < ratio < 1.13) if rate == 0.10 else (1.14 < ratio < 1.24), ratio


def test_the_excess_of_a_run_and_its_severity():
    fit = fit_follow_model([(0.3, 1)] * 30 + [(0.3, 0)] * 70 + [(0.9, 1)] * 90 + [(0.9, 0)] * 10)
    p = in_control_probability("over_reliance", 0.3, fit)
    ten = sum(excess_term("over_reliance", c=0.3, e=1, p=p) for _ in range(10))
    assert round(ten, 4) == 2.8 and severity(ten) == "medium"  # 10 x 0.4 x (1 - 0.3)
    # following where the AI is likely right adds no harm
    p9 = in_control_probability("over_reliance", 0.9, fit)
    assert excess_term("over_reliance", c=0.9, e=1, p=p9) == 0.0
    assert excess_term("over_reliance", c=0.5, e=1, p=0.2) == 0.0
    # overriding where the AI is likely right: w_u (pi - f)
    under = in_control_probability("under_reliance", 0.9, fit)
    assert excess_term("under_reliance", c=0.9, e=1, p=under) == pytest.approx(0.8 * 0.9, abs=1e-6)
    assert excess_term("under_reliance", c=0.3, e=1, p=0.7) == 0.0
    assert excess_term("ai_calibration_up", c=0.8, e=1, p=0.2) == pytest.approx(0.8)  # c - y
    assert excess_term("ai_calibration_down", c=0.8, e=1, p=0.8) == pytest.approx(0.2)  # y - c
    assert excess_term("probe_sprt", c=None, e=1, p=0.1) == pytest.approx(0.9)  # misses - p0
    with pytest.raises(ValueError):
        excess_term("over_reliance", c=None, e=1, p=0.3)


@pytest.mark.parametrize(
    ("excess", "expected"),
    [
        (-3.0, "low"),
        (0.0, "low"),
        (0.99999, "low"),
        (1.0, "medium"),
        (4.99999, "medium"),
        (5.0, "high"),
        (40, "high"),
    ],
)
def test_severity_bands_compare_unrounded(excess, expected):
    assert severity(excess) == expected
