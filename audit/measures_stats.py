"""The interval arithmetic of the calibration measures (docs/reference/calibration.md, Rates,
Discrimination, The organisation's interval, GET /trust-score/trend): Wilson's score interval,
Kish's effective n and the ratio estimator's clustered variance, Newcombe's hybrid score interval
of a difference, Student's t quantile and the weighted least-squares slope of the trend. Free of
Django, the database and scipy (a development dependency only; the tests check these functions
against scipy and statsmodels), re-exported by `audit.measures`."""

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, NamedTuple

from audit.figures import TrustRates

Z95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054, the two-sided 95 % normal quantile
# An effective n compared with a floor allows for rounding: Kish's n of ten equal weights
# computes as 9.999999999999996.
N_TOLERANCE = 1e-9


def wilson(rate: float, n: float, z: float = Z95) -> list[float]:
    """The Wilson (1927) score interval of a rate at (effective) sample size n; [0, 1] at n = 0."""
    if n <= 0:
        return [0.0, 1.0]
    z2 = z * z
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(max(0.0, rate * (1 - rate)) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def t_two_sided_mass(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with an integer number of degrees of freedom (Abramowitz and
    Stegun 26.7.3 and 26.7.4: finite sums in theta = atan(t / sqrt(df)))."""
    if t <= 0:
        return 0.0
    theta = math.atan(t / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 1:
        if df == 1:
            return 2 * theta / math.pi
        term, total = 1.0, 1.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2 / math.pi * (theta + s * math.cos(theta) * total)
    term, total = 1.0, 1.0
    for k in range(1, df // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


def t_quantile(probability: float, df: int) -> float:
    """The `probability` quantile (above 0.5) of Student's t with `df` >= 1 degrees of freedom,
    by bisection on the exact distribution function (to the last bits of a double)."""
    mass = 2 * probability - 1  # P(|T| < t)
    low, high = 0.0, 1.0
    while t_two_sided_mass(high, df) < mass:
        low, high = high, high * 2
    for _ in range(200):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if t_two_sided_mass(mid, df) < mass:
            low = mid
        else:
            high = mid
    return (low + high) / 2


@dataclass(frozen=True)
class Clusters:
    """Over the reviewers j of a window, for one rate: k = reviewers with weight (D_j > 0),
    nn = sum N_j^2, nd = sum N_j D_j, dd = sum D_j^2, with N_j the reviewer's weighted
    numerator and D_j their weight sum."""

    k: int
    nn: float
    nd: float
    dd: float

    @classmethod
    def of(cls, pairs: Iterable[tuple[float, float]]) -> "Clusters":
        k, nn, nd, dd = 0, 0.0, 0.0, 0.0
        for num, den in pairs:
            if den > 0:
                k += 1
                nn, nd, dd = nn + num * num, nd + num * den, dd + den * den
        return cls(k, nn, nd, dd)

    def variance(self, r: float, den: float) -> float:
        """v = k/(k-1) * sum_j (N_j - r D_j)^2 / D^2, the ratio estimator's variance with the
        reviewers as clusters (0 with fewer than two reviewers carrying weight)."""
        if self.k < 2 or den <= 0:
            return 0.0
        spread = self.nn - 2 * r * self.nd + r * r * self.dd
        return self.k / (self.k - 1) * max(0.0, spread) / (den * den)


def weighted_rate(
    num: float, den: float, sq: float, clusters: Clusters | None = None
) -> tuple[float | None, float, list[float]]:
    """(rate, effective n, 95 % interval) of a stake-weighted rate. Effective n: Kish's
    (sum w)^2 / sum w^2, for an organisation the smaller of it and r(1 - r) / v. Interval: Wilson
    at that n; for an organisation with k >= 2 reviewers carrying weight, the wider of Wilson at
    Kish's n and r -/+ t(0.975, k - 1) sqrt(v), clipped to [0, 1] (it estimates the process,
    reviewers like these, not only the k reviewers seen)."""
    if den <= 0:
        return None, 0.0, [0.0, 1.0]
    r = min(1.0, max(0.0, num / den))
    kish = den * den / sq if sq > 0 else 0.0
    if clusters is None or clusters.k < 2:
        return r, kish, wilson(r, kish)
    v = clusters.variance(r, den)
    n_eff = min(kish, r * (1 - r) / v) if v > 0 else kish
    low, high = wilson(r, kish)
    half = t_quantile(0.975, clusters.k - 1) * math.sqrt(v)
    return r, n_eff, [max(0.0, min(low, r - half)), min(1.0, max(high, r + half))]


def newcombe(p1: float, ci1: Sequence[float], p2: float, ci2: Sequence[float]) -> tuple[float, list[float]]:
    """p1 - p2 and Newcombe's (1998, method 10) hybrid score interval from the two rates' own
    intervals [l1, u1] and [l2, u2]."""
    diff = p1 - p2
    low = diff - math.sqrt((p1 - ci1[0]) ** 2 + (ci2[1] - p2) ** 2)
    high = diff + math.sqrt((ci1[1] - p1) ** 2 + (p2 - ci2[0]) ** 2)
    return diff, [low, high]


def wls_slope(points: Sequence[tuple[float, float, float]]) -> tuple[float, float] | None:
    """(slope, its standard error) of y on x by weighted least squares over (x, y, weight)
    points, with the residual variance estimated from the points (m - 2 degrees of freedom, as
    statsmodels' WLS); None with fewer than three points of positive weight or no spread in x."""
    pts = [(x, y, w) for x, y, w in points if w > 0]
    m = len(pts)
    if m < 3:
        return None
    sw = math.fsum(w for _, _, w in pts)
    mx = math.fsum(w * x for x, _, w in pts) / sw
    my = math.fsum(w * y for _, y, w in pts) / sw
    sxx = math.fsum(w * (x - mx) ** 2 for x, _, w in pts)
    if sxx <= 0:
        return None
    slope = math.fsum(w * (x - mx) * (y - my) for x, y, w in pts) / sxx
    intercept = my - slope * mx
    rss = math.fsum(w * (y - intercept - slope * x) ** 2 for x, y, w in pts)
    return slope, math.sqrt(rss / (m - 2) / sxx)


class Rate(NamedTuple):
    """A stake-weighted rate as `weighted_rate` gives it."""

    rate: float | None
    effective_n: float
    ci: list[float]


def trust_rates(over: Rate, under: Rate) -> TrustRates:
    """The over- and under-trust rates' figures, in the order the documents show them."""
    return {
        "overtrust_rate": over.rate,
        "overtrust_effective_n": over.effective_n,
        "overtrust_rate_ci": over.ci,
        "undertrust_rate": under.rate,
        "undertrust_effective_n": under.effective_n,
        "undertrust_rate_ci": under.ci,
    }


# The confidence a recalibrated query judges with: p' = expit(a + b * logit(c)) (see `recalibration`).
Recalibrate = Callable[[float], float]
RECALIBRATION_CLIP = 0.001  # c is clipped to [0.001, 0.999] before the logit of p'


def recalibration(intercept: float, slope: float) -> Recalibrate:
    """p' = expit(a + b * logit(c)) with the confidence check's fitted (a, b), c clipped to
    [0.001, 0.999] (docs/reference/calibration.md, A miscalibrated confidence)."""

    def recalibrated(c: float) -> float:
        c = min(1 - RECALIBRATION_CLIP, max(RECALIBRATION_CLIP, c))
        eta = intercept + slope * math.log(c / (1 - c))
        return 1 / (1 + math.exp(-eta)) if eta >= 0 else math.exp(eta) / (1 + math.exp(eta))

    return recalibrated


Direction = Literal["improving", "declining", "stable", "undetermined"]


def trend_direction(fit: tuple[float, float] | None, periods_fitted: int, min_periods: int = 4) -> Direction:
    """The trend's direction from the WLS slope of the reliance gap R (lower is better) and its
    standard error: `improving` when slope + t se < 0, `declining` when slope - t se > 0 (t the
    0.975 quantile of Student's t with periods_fitted - 2 degrees of freedom), else `stable`;
    `undetermined` with fewer than `min_periods` complete periods with scored decisions."""
    if fit is None or periods_fitted < min_periods:
        return "undetermined"
    slope, se = fit
    t = t_quantile(0.975, periods_fitted - 2)
    if slope + t * se < 0:
        return "improving"
    if slope - t * se > 0:
        return "declining"
    return "stable"
