"""A seeded simulation with known change points (docs/reference/drift.md, Simulation): for each
CUSUM chart, a baseline of 200 decisions from a known reviewer (or a calibrated AI), h calibrated
for ARL0 500, then streams in control (the false-alarm rate against the target) and streams whose
watched event's odds change by R = 2 or 3 after 100 points (the detection delay). The table it
produces is the one docs/reference/drift.md prints; `python -m tests.drift.test_drift_simulation`
prints it again after a change."""

import math
import re
from dataclasses import dataclass

import numpy as np

from drift.calibration import calibrate
from drift.charts import (
    AI_CALIBRATION_DOWN,
    AI_CALIBRATION_UP,
    CUSUM_CHARTS,
    OVER_RELIANCE,
    UNDER_RELIANCE,
    cusum_step,
    fit_follow_model,
    in_control_probability,
)
from tests.processes import ROOT

TARGET = 500
BASELINE = 200
STREAMS = 400
CHANGE_AT = 100
ODDS_RATIO = 2.0


def true_follow(c: np.ndarray) -> np.ndarray:
    """The simulated reviewer: follows the AI with logit pi(c) = -2 + 5c."""
    return 1 / (1 + np.exp(-(-2 + 5 * c)))


def confidences(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.uniform(0.2, 0.95, n)


def true_event_probability(chart: str, c: np.ndarray) -> np.ndarray:
    """The real probability of the chart's event in control: the reviewer's own follow rate, or
    an AI whose confidence is its probability of being right."""
    return {
        OVER_RELIANCE: true_follow(c),
        UNDER_RELIANCE: 1 - true_follow(c),
        AI_CALIBRATION_UP: 1 - c,
        AI_CALIBRATION_DOWN: c,
    }[chart]


@dataclass
class Row:
    chart: str
    h: float
    calibrated_arl0: float
    as_baseline_arl: tuple[float, float]  # (mean, se): the reviewer behaves exactly as the fit
    true_arl: tuple[float, float]  # (mean, se): the reviewer behaves as before the baseline
    calibrated_arl1: tuple[float, float]
    delay: dict[float, tuple[float, float, float]]  # R -> (mean delay, its se, share found within 200)


CHUNK = 256


class Stream:
    """One reviewer's decisions after the baseline, drawn a chunk at a time: the chart's P from
    the monitor's fit, and the event drawn from `truth` (the fitted P itself, or the simulated
    reviewer), whose odds are multiplied by `ratio` from point CHANGE_AT + 1 on."""

    def __init__(self, rng: np.random.Generator, chart: str, fit, truth: str, ratio: float) -> None:
        self.rng, self.chart, self.fit, self.truth, self.ratio = rng, chart, fit, truth, ratio
        self.drawn = 0

    def chunk(self) -> tuple[list[float], list[int]]:
        c = confidences(self.rng, CHUNK)
        p = np.array([in_control_probability(self.chart, v, self.fit) for v in c.tolist()])
        truth = p if self.truth == "fit" else true_event_probability(self.chart, c)
        after = np.arange(self.drawn, self.drawn + CHUNK) >= CHANGE_AT
        truth = np.where(after, self.ratio * truth / (1 - truth + self.ratio * truth), truth)
        self.drawn += CHUNK
        return p.tolist(), (self.rng.random(CHUNK) < truth).astype(int).tolist()


def run_length(stream: Stream, h: float, start: int = 0, cap: int = 20 * TARGET) -> int:
    """The index of the chart's first signal after point `start` (restarting after any earlier
    signal, as a monitor does), or `cap`."""
    x, index = 0.0, 0
    while index < cap:
        p, events = stream.chunk()
        for pt, e in zip(p, events, strict=True):
            index += 1
            point = cusum_step(x, e, pt, ODDS_RATIO, h)
            x = 0.0 if point.signal else point.x
            if point.signal and index > start:
                return index
    return cap


def mean_se(values: list[int]) -> tuple[float, float]:
    return float(np.mean(values)), float(np.std(values, ddof=1) / math.sqrt(len(values)))


def baseline_fit(rng: np.random.Generator, chart: str, size: int):
    """The baseline's case mix (its P_i) and the fit of a reliance chart (else None)."""
    baseline_c = confidences(rng, size)
    fit = None
    if chart in (OVER_RELIANCE, UNDER_RELIANCE):
        followed = rng.random(size) < true_follow(baseline_c)
        fit = fit_follow_model(zip(baseline_c.tolist(), followed.tolist(), strict=True))
    return [in_control_probability(chart, c, fit) for c in baseline_c.tolist()], fit


def simulate(chart: str, seed: int) -> Row:
    rng = np.random.default_rng(seed)
    mix, fit = baseline_fit(rng, chart, BASELINE)
    calibration = calibrate(mix, odds_ratio=ODDS_RATIO, arl0_target=TARGET, runs=2000, seed=seed)
    h = calibration.h
    as_baseline = mean_se([run_length(Stream(rng, chart, fit, "fit", 1.0), h) for _ in range(STREAMS)])
    true = as_baseline
    if fit is not None:
        true = mean_se([run_length(Stream(rng, chart, fit, "true", 1.0), h) for _ in range(STREAMS)])
    delay = {}
    for ratio in (2.0, 3.0):
        delays = [
            run_length(Stream(rng, chart, fit, "fit", ratio), h, start=CHANGE_AT) - CHANGE_AT
            for _ in range(STREAMS)
        ]
        delay[ratio] = (*mean_se(delays), float(np.mean(np.array(delays) <= 200)))
    return Row(
        chart=chart,
        h=h,
        calibrated_arl0=calibration.arl0,
        as_baseline_arl=as_baseline,
        true_arl=true,
        calibrated_arl1=(calibration.arl1_r2, calibration.arl1_r3),
        delay=delay,
    )


def simulation_rows() -> list[Row]:
    return [simulate(chart, seed) for seed, chart in enumerate(CUSUM_CHARTS, start=1)]


def baseline_size_spread(sizes=(200, 1000), reviewers: int = 6, streams: int = 100) -> dict[int, list[float]]:
    """The in-control ARL of `over_reliance` against the true reviewer, for several simulated
    reviewers' baselines of each size: how much the fit's sampling error moves the false-alarm
    rate away from the target."""
    spread = {}
    for size in sizes:
        arls = []
        for reviewer in range(reviewers):
            rng = np.random.default_rng(1000 * size + reviewer)
            mix, fit = baseline_fit(rng, OVER_RELIANCE, size)
            h = calibrate(mix, odds_ratio=ODDS_RATIO, arl0_target=TARGET, runs=2000, seed=reviewer).h
            lengths = [run_length(Stream(rng, OVER_RELIANCE, fit, "true", 1.0), h) for _ in range(streams)]
            arls.append(float(np.mean(lengths)))
        spread[size] = sorted(arls)
    return spread


def table(rows: list[Row], spread: dict[int, list[float]]) -> str:
    lines = [
        "| chart | h | ARL0 calibrated | in-control ARL, reviewer as the baseline's fit | in-control ARL, "
        "the simulated reviewer | ARL1 at R = 2 calibrated | mean delay at R = 2 (found within 200) "
        "| ARL1 at R = 3 calibrated | mean delay at R = 3 (found within 200) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        (d2, s2, w2), (d3, s3, w3) = row.delay[2.0], row.delay[3.0]
        lines.append(
            f"| `{row.chart}` | {row.h:.3f} | {row.calibrated_arl0:.0f} | {row.as_baseline_arl[0]:.0f} ± "
            f"{row.as_baseline_arl[1]:.0f} | {row.true_arl[0]:.0f} ± {row.true_arl[1]:.0f} | "
            f"{row.calibrated_arl1[0]:.1f} | {d2:.1f} ± {s2:.1f} ({w2:.0%}) | "
            f"{row.calibrated_arl1[1]:.1f} | {d3:.1f} ± {s3:.1f} ({w3:.0%}) |"
        )
    lines += [
        "",
        "| baseline decisions | in-control ARL of `over_reliance` for six simulated reviewers (target 500) |",
        "|---|---|",
    ]
    for size, arls in spread.items():
        lines.append(f"| {size:,} | {', '.join(f'{a:.0f}' for a in arls)} |")
    return "\n".join(lines)


def test_the_simulation_meets_its_target_detects_shifts_and_is_the_table_the_reference_prints():
    rows = simulation_rows()
    for row in rows:
        # In control, when the reviewer behaves as the baseline's fit (the calibration's premise),
        # the false-alarm rate is the target's: 400 streams give the mean run length to about 5 %,
        # and the stream's confidences are not the baseline's 200 (10 % more).
        mean, se = row.as_baseline_arl
        assert abs(math.log(mean / TARGET)) <= 4.5 * se / mean + 0.1, row
        # A change of the event's odds by R after 100 points is found, faster when larger, and
        # no slower than calibration's zero-state ARL1 (the chart may already be above 0)
        (d2, s2, _), (d3, s3, _) = row.delay[2.0], row.delay[3.0]
        assert d3 + 3 * s3 < d2 < TARGET / 4, row
        for (delay, se), arl1 in zip(((d2, s2), (d3, s3)), row.calibrated_arl1, strict=True):
            assert 0.6 * arl1 - 4 * se <= delay <= 1.1 * arl1 + 4 * se, row
    # The fit of a short baseline moves the realised rate: a longer baseline moves it less
    spread = baseline_size_spread()
    assert spread[1000][-1] / spread[1000][0] < spread[200][-1] / spread[200][0]
    reference = (ROOT / "docs" / "reference" / "drift.md").read_text()
    printed = re.search(r"<!-- simulation -->\n(.*?)\n<!-- /simulation -->", reference, re.S)
    assert printed, "docs/reference/drift.md prints the simulation's table between its markers"
    assert printed.group(1) == table(rows, spread), (
        "run `python -m tests.drift.test_drift_simulation`, paste its table"
    )


if __name__ == "__main__":
    print(table(simulation_rows(), baseline_size_spread()))
