"""The alarm limit h of a CUSUM chart from a target in-control average run length (ARL0), by a
seeded Monte Carlo on the monitor's own baseline case mix (docs/reference/drift.md,
Calibration).

A run starts at X = 0; each step draws one baseline point uniformly (with replacement), its event
e ~ Bernoulli(P), and X = max(0, X + W) as the chart does. The run length at h is the first step
with X >= h, capped at 20 x the target. The same runs serve every h (common random numbers), so
ARL0(h) is nondecreasing in h and h is the smallest multiple of 0.001 with ARL0(h) >= target.

How it is computed. A run's length at h depends on its path only through the path's records (the
steps at which X exceeds every earlier X): the run length at h is the step of the first record
>= h. So each run is simulated once, up to a level H (until X >= H or the cap), keeping its
records, and the sums of run lengths at every h <= H follow from the records exactly, in integers.
H starts low and is raised (the runs continue where they stopped) until ARL0(H) >= target. The
steps are simulated for all runs at once, in blocks, with NumPy: within a block the recursion
X_t = max(0, X_(t-1) + W_t) is X_t = S_t - min(0, min_(k<=t) S_k) with S the running sum from
the block's starting X.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GRID = 1000  # h is a multiple of 1/GRID = 0.001
CAP_FACTOR = 20
_BLOCK_ELEMENTS = 1 << 20  # steps simulated per block, all active runs together
_FIRST_LEVEL = 1.0


@dataclass(frozen=True)
class Calibration:
    """A calibration's figures, unrounded (`figures` gives them as served)."""

    odds_ratio: float
    arl0_target: int
    runs: int
    seed: int
    baseline_decisions: int
    h: float
    arl0: float
    arl0_se: float
    arl1_r2: float
    arl1_r2_se: float
    arl1_r3: float
    arl1_r3_se: float

    def figures(self) -> dict[str, float | int]:
        """The figures as served: h to 3 decimals, run lengths and their standard errors to 1."""
        out: dict[str, float | int] = {
            "odds_ratio": self.odds_ratio,
            "arl0_target": self.arl0_target,
            "runs": self.runs,
            "seed": self.seed,
            "baseline_decisions": self.baseline_decisions,
            "h": round(self.h, 3),
        }
        for name in ("arl0", "arl0_se", "arl1_r2", "arl1_r2_se", "arl1_r3", "arl1_r3_se"):
            out[name] = round(getattr(self, name), 1)
        return out


def out_of_control_ratios(odds_ratio: float) -> tuple[float, float]:
    """The true odds ratios ARL1 is reported at: 2 and 3 for a chart watching the event become
    commoner (R_A > 1), 1/2 and 1/3 for one watching it become rarer."""
    return (2.0, 3.0) if odds_ratio > 1 else (0.5, 1.0 / 3.0)


def calibrate(
    case_mix: Sequence[float], *, odds_ratio: float, arl0_target: int, runs: int, seed: int
) -> Calibration:
    """h for `arl0_target` on the case mix (the baseline points' in-control probabilities P),
    with ARL0 and its standard error at h, and the zero-state ARL1 at the two ratios of
    `out_of_control_ratios`, each from `runs` fresh runs. Reproducible for the same arguments."""
    p = np.asarray(case_mix, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.all((p >= 0) & (p <= 1)):
        raise ValueError("the case mix is a non-empty list of probabilities")
    if odds_ratio <= 0 or odds_ratio == 1:
        raise ValueError("the odds ratio is positive and not 1")
    streams = np.random.SeedSequence(seed).spawn(3)
    cap = CAP_FACTOR * arl0_target
    in_control = _Paths(p, p, odds_ratio, runs, cap, np.random.Generator(np.random.PCG64(streams[0])))
    j, total, squares = _smallest_level(in_control, arl0_target)
    h = j / GRID
    arl0, arl0_se = _mean_se(total, squares, runs)
    figures: list[float] = []
    for ratio, stream in zip(out_of_control_ratios(odds_ratio), streams[1:], strict=True):
        shifted = ratio * p / (1.0 - p + ratio * p)
        paths = _Paths(p, shifted, odds_ratio, runs, cap, np.random.Generator(np.random.PCG64(stream)))
        paths.advance_to(h)
        lengths = paths.t
        figures.extend(_mean_se(int(lengths.sum()), int((lengths * lengths).sum()), runs))
    return Calibration(
        odds_ratio=odds_ratio,
        arl0_target=arl0_target,
        runs=runs,
        seed=seed,
        baseline_decisions=int(p.size),
        h=h,
        arl0=arl0,
        arl0_se=arl0_se,
        arl1_r2=figures[0],
        arl1_r2_se=figures[1],
        arl1_r3=figures[2],
        arl1_r3_se=figures[3],
    )


def _mean_se(total: int, squares: int, runs: int) -> tuple[float, float]:
    mean = total / runs
    if runs < 2:
        return mean, 0.0
    variance = max(0.0, (squares - total * total / runs) / (runs - 1))
    return mean, math.sqrt(variance / runs)


def _smallest_level(paths: "_Paths", target: int) -> tuple[int, int, int]:
    """(j, sum of run lengths at j/GRID, sum of their squares) for the smallest j >= 1 with
    ARL0(j/GRID) >= target, raising the simulated level until it is reached."""
    level = _FIRST_LEVEL
    while True:
        paths.advance_to(level)
        totals, squares = paths.run_length_sums(level)
        reached = np.flatnonzero(totals >= target * paths.runs)
        if reached.size:
            j = int(reached[0])
            return j + 1, int(totals[j]), int(squares[j])
        level = _next_level(level, totals, paths.runs, target)


def _next_level(level: float, totals: np.ndarray, runs: int, target: int) -> float:
    """A level a little beyond the h where log ARL0, extrapolated linearly from the level and half
    of it, reaches the target: run lengths grow about exponentially with h."""
    arl_top = max(float(totals[-1]) / runs, 1.0)
    arl_mid = max(float(totals[len(totals) // 2]) / runs, 1.0)
    slope = max((math.log(arl_top) - math.log(arl_mid)) / (level / 2), 0.2)
    return level + max(0.25, 1.05 * (math.log(target) - math.log(arl_top)) / slope + 0.05)


class _Paths:
    """`runs` CUSUM paths on the case mix, each continued on demand up to a level, with their
    records. A step draws u uniform on [0, N): its integer part picks the point and its
    fractional part decides the event (u - i < threshold_i)."""

    def __init__(
        self,
        p: np.ndarray,
        threshold: np.ndarray,
        odds_ratio: float,
        runs: int,
        cap: int,
        rng: np.random.Generator,
    ) -> None:
        self.runs = runs
        self.cap = cap
        self.rng = rng
        self.threshold = threshold
        self.log_ratio = math.log(odds_ratio)
        self.base = -np.log(1.0 - p + odds_ratio * p)  # W when e = 0; W = base + ln R when e = 1
        # X can leave 0 only through a step with W > 0 and a positive probability; without one,
        # every run reaches the cap
        rises_on_event = (threshold > 0) & (self.base + self.log_ratio > 0)
        rises_otherwise = (threshold < 1) & (self.base > 0)
        self.can_rise = bool(np.any(rises_on_event | rises_otherwise))
        self.x = np.zeros(runs)
        self.t = np.zeros(runs, dtype=np.int64)
        self.top = np.zeros(runs)  # the highest X so far
        self.records: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (run, step, X)

    def advance_to(self, level: float) -> None:
        """Continue every run until X >= level or the cap."""
        if not self.can_rise:
            self.t[:] = self.cap
            return
        while True:
            active = np.flatnonzero((self.top < level) & (self.t < self.cap))
            if not active.size:
                return
            self._block(active, level)

    def _block(self, active: np.ndarray, level: float) -> None:
        count = active.size
        steps = int(min(max(_BLOCK_ELEMENTS // count, 64), int(self.cap - self.t[active].min())))
        n = self.base.size
        u = self.rng.random((count, steps)) * n
        i = u.astype(np.intp)
        np.minimum(i, n - 1, out=i)
        w = self.base[i]
        w[(u - i) < self.threshold[i]] += self.log_ratio
        s = np.cumsum(w, axis=1)
        s += self.x[active][:, None]
        low = np.minimum.accumulate(s, axis=1)
        np.minimum(low, 0.0, out=low)
        s -= low  # now X_t
        columns = np.arange(steps)
        remaining = self.cap - self.t[active]
        hit = (s >= level) & (columns[None, :] < remaining[:, None])
        stop = np.where(hit.any(axis=1), hit.argmax(axis=1), np.minimum(remaining, steps) - 1)
        top = np.maximum(np.maximum.accumulate(s, axis=1), self.top[active][:, None])
        before = np.empty_like(top)
        before[:, 0] = self.top[active]
        before[:, 1:] = top[:, :-1]
        new = (top > before) & (columns[None, :] <= stop[:, None])
        rows, cols = np.nonzero(new)
        if rows.size:
            self.records.append((active[rows], self.t[active][rows] + cols + 1, s[rows, cols]))
        everyone = np.arange(count)
        self.x[active] = s[everyone, stop]
        self.top[active] = top[everyone, stop]
        self.t[active] += stop + 1

    def run_length_sums(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """The sums over runs of the run length and of its square at h = j/GRID for j = 1..J, J
        the multiples of 1/GRID up to `level` (every run has reached `level` or the cap)."""
        top_j = _multiples_up_to(np.array([level]))[0]
        totals = np.zeros(top_j + 2, dtype=np.int64)
        squares = np.zeros(top_j + 2, dtype=np.int64)
        last = np.zeros(self.runs, dtype=np.int64)  # multiples covered by each run's records
        if self.records:
            run = np.concatenate([r[0] for r in self.records])
            step = np.concatenate([r[1] for r in self.records])
            value = np.concatenate([r[2] for r in self.records])
            order = np.lexsort((step, run))
            run, step, value = run[order], step[order], value[order]
            covered = np.minimum(_multiples_up_to(value), top_j)
            previous = np.empty_like(covered)
            previous[0] = 0
            previous[1:] = covered[:-1]
            first_of_run = np.ones(run.size, dtype=bool)
            first_of_run[1:] = run[1:] != run[:-1]
            previous[first_of_run] = 0
            # run length `step` for h in (previous/GRID, covered/GRID]
            spans = covered > previous
            _add_spans(totals, squares, previous[spans] + 1, covered[spans] + 1, step[spans])
            np.maximum.at(last, run, covered)
        capped = last < top_j  # the runs that reached the cap below `level`
        lengths = np.full(int(capped.sum()), self.cap, dtype=np.int64)
        _add_spans(totals, squares, last[capped] + 1, np.full(lengths.size, top_j + 1), lengths)
        return np.cumsum(totals)[1 : top_j + 1], np.cumsum(squares)[1 : top_j + 1]


def _add_spans(
    totals: np.ndarray, squares: np.ndarray, start: np.ndarray, stop: np.ndarray, value: np.ndarray
) -> None:
    """Add `value` (and its square) to the difference arrays over [start, stop)."""
    np.add.at(totals, start, value)
    np.add.at(totals, stop, -value)
    np.add.at(squares, start, value * value)
    np.add.at(squares, stop, -(value * value))


def _multiples_up_to(values: np.ndarray) -> np.ndarray:
    """The number of j >= 1 with j/GRID <= value, exactly in double."""
    j = np.floor(values * GRID).astype(np.int64)
    j += (j + 1) / GRID <= values
    j -= j / GRID > values
    return np.maximum(j, 0)
