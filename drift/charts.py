"""The arithmetic of the drift monitors (docs/reference/drift.md), standard library only, free of
Django and the database, so that the service's write path and the offline verifier
(`audit/offline_verify.py --drift`, which runs on an export alone) compute every point with the
same code.

- The follow model of the reliance charts: a logistic fit of following on the AI's confidence
  over the baseline (`fit_follow_model`, `follow_probability`).
- Each chart's event e and in-control probability P at a point (`event`,
  `in_control_probability`).
- Steiner's risk-adjusted CUSUM step (`cusum_weight`, `cusum_step`) with the signal allowance.
- Wald's SPRT on vigilance probes (`Sprt`, `sprt_step`).
- The excess of an alarm's run and its severity (`excess_term`, `severity`).

Every figure is an IEEE 754 double computed in the order written here; the rounding of the wire
(`round(x, 6)` and so on) is the caller's.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass

OVER_RELIANCE = "over_reliance"
UNDER_RELIANCE = "under_reliance"
AI_CALIBRATION_UP = "ai_calibration_up"
AI_CALIBRATION_DOWN = "ai_calibration_down"
PROBE_SPRT = "probe_sprt"
RELIANCE_CHARTS = (OVER_RELIANCE, UNDER_RELIANCE)
AI_CALIBRATION_CHARTS = (AI_CALIBRATION_UP, AI_CALIBRATION_DOWN)
CUSUM_CHARTS = RELIANCE_CHARTS + AI_CALIBRATION_CHARTS
CHARTS = (*CUSUM_CHARTS, PROBE_SPRT)

# A CUSUM signals at X >= h - SIGNAL_ALLOWANCE, and the SPRT concludes within it of a bound, so
# that two evaluation orders of the same sums agree on the point.
SIGNAL_ALLOWANCE = 1e-9

MLE = "mle"
AUGMENTED = "augmented"
INTERCEPT_ONLY = "intercept_only"
FIT_DECIMALS = 6
FIT_TOLERANCE = 1e-9
_MAX_ITERATIONS = 100
_MAX_HALVINGS = 60

SEVERITY_MEDIUM_FROM = 1.0
SEVERITY_HIGH_FROM = 5.0


@dataclass(frozen=True)
class Fit:
    """The baseline follow model logit pi(c) = intercept + slope * c, coefficients rounded to 6
    decimal places (the values every chart uses); `followed` is the baseline's followed points."""

    method: str
    intercept: float
    slope: float
    followed: int

    def as_dict(self) -> dict[str, str | float | int]:
        return {
            "method": self.method,
            "intercept": self.intercept,
            "slope": self.slope,
            "followed": self.followed,
        }


def fit_follow_model(points: Iterable[tuple[float, bool | int]]) -> Fit:
    """The follow model over the baseline's (ai_confidence, followed) points.

    1. `mle` when the points overlap (both outcomes, and max c overridden > min c followed and
       max c followed > min c overridden): the unpenalised maximum-likelihood estimate, which
       then exists and is unique.
    2. `augmented` otherwise, with at least two distinct confidences: the estimate after adding
       four pseudo-points of weight 1/2, one followed and one overridden at each of the lowest
       and the highest confidence.
    3. `intercept_only` with a single distinct confidence: slope 0 and intercept
       logit((F + 1)/(N + 2)), F the followed points.

    The rule depends on the data only, never on how the iteration behaved."""
    data = [(float(c), 1 if f else 0) for c, f in points]
    if not data:
        raise ValueError("the follow model needs at least one baseline point")
    n = len(data)
    followed = sum(f for _, f in data)
    followed_c = [c for c, f in data if f]
    overridden_c = [c for c, f in data if not f]
    overlap = (
        bool(followed_c)
        and bool(overridden_c)
        and max(overridden_c) > min(followed_c)
        and max(followed_c) > min(overridden_c)
    )
    # (c, weight of the followed, weight of all) per distinct confidence
    groups: dict[float, list[float]] = {}
    for c, f in data:
        group = groups.setdefault(c, [0.0, 0.0])
        group[0] += f
        group[1] += 1.0
    if overlap:
        method = MLE
    elif len(groups) >= 2:
        method = AUGMENTED
        for c in (min(groups), max(groups)):
            groups[c][0] += 0.5
            groups[c][1] += 1.0
    else:
        rate = (followed + 1) / (n + 2)
        intercept = math.log(rate / (1.0 - rate))
        return Fit(INTERCEPT_ONLY, _rounded(intercept), 0.0, followed)
    a, b = newton_logistic([(c, ones, total) for c, (ones, total) in sorted(groups.items())])
    return Fit(method, _rounded(a), _rounded(b), followed)


def newton_logistic(groups: list[tuple[float, float, float]]) -> tuple[float, float]:
    """The maximum-likelihood (a, b) of logit P(f = 1) = a + b*c over (c, weight of f = 1, total
    weight) groups: Newton-Raphson from (0, 0), halving any step that lowers the
    log-likelihood, until a full step moves neither coefficient by more than FIT_TOLERANCE /
    100. Unrounded. The caller guarantees the estimate exists (overlapping data)."""
    a = b = 0.0
    current = _log_likelihood(groups, a, b)
    for _ in range(_MAX_ITERATIONS):
        g0 = g1 = h00 = h01 = h11 = 0.0
        for c, ones, total in groups:
            p = _expit(a + b * c)
            residual = ones - total * p
            w = total * p * (1.0 - p)
            g0 += residual
            g1 += residual * c
            h00 += w
            h01 += w * c
            h11 += w * c * c
        det = h00 * h11 - h01 * h01
        if det <= 0.0:
            raise ArithmeticError("the logistic fit's information matrix is singular")
        da = (h11 * g0 - h01 * g1) / det
        db = (h00 * g1 - h01 * g0) / det
        if max(abs(da), abs(db)) <= FIT_TOLERANCE / 100:
            return a + da, b + db
        step = 1.0
        for _ in range(_MAX_HALVINGS):
            trial = _log_likelihood(groups, a + step * da, b + step * db)
            # a step "lowers" the likelihood beyond the double's noise on the sum
            if trial >= current - 1e-12 * (1.0 + abs(current)):
                break
            step /= 2
        a, b = a + step * da, b + step * db
        current = _log_likelihood(groups, a, b)
    raise ArithmeticError("the logistic fit did not converge")


def _log_likelihood(groups: list[tuple[float, float, float]], a: float, b: float) -> float:
    total_ll = 0.0
    for c, ones, total in groups:
        eta = a + b * c
        # log(1 + exp(eta)) without overflow
        softplus = max(eta, 0.0) + math.log1p(math.exp(-abs(eta)))
        total_ll += ones * eta - total * softplus
    return total_ll


def _expit(eta: float) -> float:
    if eta >= 0:
        return 1.0 / (1.0 + math.exp(-eta))
    z = math.exp(eta)
    return z / (1.0 + z)


def _rounded(value: float) -> float:
    return round(value, FIT_DECIMALS) + 0.0  # + 0.0: never a negative zero on the wire


def follow_probability(fit: Fit, c: float) -> float:
    """pi(c) = 1/(1 + exp(-(a + b*c))) with the fit's rounded coefficients, in IEEE 754 double,
    no clipping (an exponent beyond the double's range gives the limit 0.0, as IEEE 754 does)."""
    try:
        return 1.0 / (1.0 + math.exp(-(fit.intercept + fit.slope * c)))
    except OverflowError:
        return 0.0


def in_control_probability(chart: str, c: float, fit: Fit | None = None) -> float:
    """P, the probability of the chart's event at AI confidence c while the behaviour matches the
    baseline: pi(c) for `over_reliance`, 1 - pi(c) for `under_reliance`, 1 - c for
    `ai_calibration_up`, c for `ai_calibration_down`."""
    if chart == OVER_RELIANCE:
        return follow_probability(_needs(fit), c)
    if chart == UNDER_RELIANCE:
        return 1.0 - follow_probability(_needs(fit), c)
    if chart == AI_CALIBRATION_UP:
        return 1.0 - c
    if chart == AI_CALIBRATION_DOWN:
        return c
    raise ValueError(f"{chart!r} is not a CUSUM chart")


def _needs(fit: Fit | None) -> Fit:
    if fit is None:
        raise ValueError("a reliance chart needs its baseline fit")
    return fit


def event(chart: str, *, followed: bool | None = None, ai_right: bool | None = None) -> int:
    """e, 1 for the watched event: following (`over_reliance`), overriding (`under_reliance`),
    the AI wrong (`ai_calibration_up`), the AI right (`ai_calibration_down`), a missed probe
    (`probe_sprt`, `followed` being the probe followed)."""
    if chart in (OVER_RELIANCE, PROBE_SPRT):
        return 1 if _given(followed, "followed") else 0
    if chart == UNDER_RELIANCE:
        return 0 if _given(followed, "followed") else 1
    if chart == AI_CALIBRATION_UP:
        return 0 if _given(ai_right, "ai_right") else 1
    if chart == AI_CALIBRATION_DOWN:
        return 1 if _given(ai_right, "ai_right") else 0
    raise ValueError(f"unknown chart {chart!r}")


def _given(value: bool | None, name: str) -> bool:
    if value is None:
        raise ValueError(f"this chart's event needs {name}")
    return bool(value)


def cusum_weight(e: int, p: float, odds_ratio: float) -> float:
    """Steiner's score W = e*ln R - ln(1 - P + R*P), R the odds ratio the chart is tuned to."""
    return e * math.log(odds_ratio) - math.log(1.0 - p + odds_ratio * p)


@dataclass(slots=True)
class CusumPoint:
    w: float
    x: float
    signal: bool


def cusum_step(x_carried: float, e: int, p: float, odds_ratio: float, h: float) -> CusumPoint:
    """One point of the upper CUSUM: X = max(0, X_carried + W), a signal when X >= h - 1e-9.
    The caller carries 0 into the next point after a signal (and after the other restarts of
    docs/reference/drift.md)."""
    w = cusum_weight(e, p, odds_ratio)
    x = max(0.0, x_carried + w)
    return CusumPoint(w, x, signals(x, h))


def signals(x: float, h: float) -> bool:
    return x >= h - SIGNAL_ALLOWANCE


@dataclass(frozen=True)
class Sprt:
    """Wald's sequential probability ratio test of a probe miss rate p0 (H0) against p1 (H1),
    with error rates alpha and beta."""

    p0: float = 0.10
    p1: float = 0.30
    alpha: float = 0.05
    beta: float = 0.10

    @property
    def miss_llr(self) -> float:
        return math.log(self.p1 / self.p0)

    @property
    def catch_llr(self) -> float:
        return math.log((1.0 - self.p1) / (1.0 - self.p0))

    @property
    def upper_bound(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def asn_h0(self) -> float:
        """Wald's expected number of probes to a conclusion under H0 (no overshoot)."""
        drift = self.p0 * self.miss_llr + (1.0 - self.p0) * self.catch_llr
        return ((1.0 - self.alpha) * self.lower_bound + self.alpha * self.upper_bound) / drift

    @property
    def asn_h1(self) -> float:
        """Wald's expected number of probes to a conclusion under H1 (no overshoot)."""
        drift = self.p1 * self.miss_llr + (1.0 - self.p1) * self.catch_llr
        return (self.beta * self.lower_bound + (1.0 - self.beta) * self.upper_bound) / drift

    def increment(self, missed: int | bool) -> float:
        return self.miss_llr if missed else self.catch_llr

    def conclusion(self, s: float) -> str | None:
        """`h1` at S >= upper - 1e-9, `h0` at S <= lower + 1e-9, else None."""
        if s >= self.upper_bound - SIGNAL_ALLOWANCE:
            return "h1"
        if s <= self.lower_bound + SIGNAL_ALLOWANCE:
            return "h0"
        return None


@dataclass(slots=True)
class SprtPoint:
    llr: float
    llr_sum: float
    conclusion: str | None


def sprt_step(sprt: Sprt, s_carried: float, missed: int | bool) -> SprtPoint:
    """One probe: S = S_carried + z. The caller carries 0 into the next probe after any
    conclusion (and after an acknowledgement of the monitor's alarm)."""
    llr = sprt.increment(missed)
    s = s_carried + llr
    return SprtPoint(llr, s, sprt.conclusion(s))


def excess_term(chart: str, *, c: float | None, e: int, p: float) -> float:
    """One point's share of an alarm's `excess`, e - P weighted by the harm of the change:
    - `over_reliance`: max(0, 1 - 2c) * (f - pi(c)), following where the AI is unlikely right;
    - `under_reliance`: max(0, 2c - 1) * (pi(c) - f), overriding where it is likely right;
    - `ai_calibration_up` and `_down`: (c - y) and (y - c), observed minus expected;
    - `probe_sprt`: missed - p0 (pass `p` = p0, `c` unused).
    For the reliance charts the sum over a run is the expected number of extra wrong final
    decisions compared with the baseline reviewer at the same confidences."""
    if chart == OVER_RELIANCE:
        return max(0.0, 1.0 - 2.0 * _confidence(c)) * (e - p)
    if chart == UNDER_RELIANCE:
        return max(0.0, 2.0 * _confidence(c) - 1.0) * (e - p)
    if chart in AI_CALIBRATION_CHARTS or chart == PROBE_SPRT:
        return e - p
    raise ValueError(f"unknown chart {chart!r}")


def _confidence(c: float | None) -> float:
    if c is None:
        raise ValueError("a reliance chart's excess needs the AI's confidence")
    return c


def severity(excess: float) -> str:
    """`low` under 1 expected extra wrong decision, `medium` from 1 to under 5, `high` from 5,
    compared unrounded."""
    if excess >= SEVERITY_HIGH_FROM:
        return "high"
    if excess >= SEVERITY_MEDIUM_FROM:
        return "medium"
    return "low"
