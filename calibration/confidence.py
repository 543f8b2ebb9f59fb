"""The confidence check of the AI (docs/reference/calibration.md, Confidence check): is
the AI's confidence a probability? A Cox (1958) logistic fit over (confidence, outcome) groups,
free of Django and the database like `audit.measures`, whose interval quantile and ratio it uses.
`calibration.reporting` feeds it the groups from SQL."""

import math
from collections.abc import Iterable
from typing import Literal, NotRequired, TypedDict

from audit.measures import Z95, ratio
from audit.measures_stats import Recalibrate, recalibration

CONFIDENCE_CHECK_MIN = 100
LOGIT_CLIP = 1e-4  # confidences are clipped to [1e-4, 1 - 1e-4] before the logit
LR_ALPHA = 0.05  # the likelihood-ratio test's level


class ConfidenceCheck(TypedDict):
    """The check's figures (`confidence_check`), as the API serves them and the reports print them."""

    decisions: int
    limit: NotRequired[int]  # the latest decisions read at most, when read from the database
    intercept: float | None
    intercept_ci: list[float] | None
    slope: float | None
    slope_ci: list[float] | None
    brier_score: float | None
    lr_statistic: float | None
    lr_p_value: float | None
    verdict: Literal["consistent", "miscalibrated", "not_checked"]


def logit(c: float) -> float:
    c = min(1 - LOGIT_CLIP, max(LOGIT_CLIP, c))
    return math.log(c / (1 - c))


def confidence_check(
    pairs: Iterable[tuple[float, int, int]], *, brier_sum: float | None = None
) -> ConfidenceCheck:
    """The Cox (1958) calibration check of the AI's confidence over (confidence, y, count) groups:
    logit P(y = 1) = a + b * logit(c), fitted by Newton-Raphson, with Wald 95 % intervals, and
    the Brier score, and the likelihood-ratio test of (a, b) = (0, 1) on 2 degrees of freedom.
    `verdict` is `miscalibrated` when that test rejects at 5 %, `consistent` otherwise, `not_checked` under CONFIDENCE_CHECK_MIN decisions or when the fit
    has no finite solution (all outcomes alike, or separated by the confidence)."""
    groups = [(c, y, k) for c, y, k in pairs if k > 0]
    total = sum(k for _, _, k in groups)
    brier = ratio(sum(k * (c - y) ** 2 for c, y, k in groups) if brier_sum is None else brier_sum, total)
    out: ConfidenceCheck = {
        "decisions": total,
        "intercept": None,
        "intercept_ci": None,
        "slope": None,
        "slope_ci": None,
        "brier_score": brier,
        "lr_statistic": None,
        "lr_p_value": None,
        "verdict": "not_checked",
    }
    if total < CONFIDENCE_CHECK_MIN:
        return out
    by_c = _by_confidence(groups)
    fit = _logistic_fit(by_c)
    if fit is None:
        return out
    (a, b), (var_a, var_b) = fit
    a_ci = [a - Z95 * math.sqrt(var_a), a + Z95 * math.sqrt(var_a)]
    b_ci = [b - Z95 * math.sqrt(var_b), b + Z95 * math.sqrt(var_b)]
    # The likelihood-ratio test of (a, b) = (0, 1) jointly, chi-squared on 2 degrees of freedom
    # (whose survival function is exp(-x / 2)).
    statistic = max(0.0, 2 * (_log_likelihood(by_c, a, b) - _log_likelihood(by_c, 0.0, 1.0)))
    p_value = math.exp(-statistic / 2)
    out.update(
        {
            "intercept": a,
            "intercept_ci": a_ci,
            "slope": b,
            "slope_ci": b_ci,
            "lr_statistic": statistic,
            "lr_p_value": p_value,
            "verdict": "miscalibrated" if p_value < LR_ALPHA else "consistent",
        }
    )
    return out


def _log_likelihood(groups: list[tuple[float, int, int]], a: float, b: float) -> float:
    """The binomial log-likelihood of logit P(y = 1) = a + b x over (x, ones, decisions) groups."""
    total = 0.0
    for x, ones, k in groups:
        eta = a + b * x
        # log expit(eta) and log(1 - expit(eta)), stable at both ends
        log_p = -math.log1p(math.exp(-eta)) if eta >= 0 else eta - math.log1p(math.exp(eta))
        log_q = log_p - eta
        total += ones * log_p + (k - ones) * log_q
    return total


def _by_confidence(groups: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """(logit(c), decisions with y = 1, decisions) per distinct confidence c: the likelihood's
    terms of one c computed once, whatever the outcomes (a large window has about twice as many
    (c, y) groups as confidences)."""
    by_c: dict[float, list[int]] = {}
    for c, y, k in groups:
        counts = by_c.setdefault(c, [0, 0])
        counts[0] += k * y
        counts[1] += k
    return [(logit(c), ones, n) for c, (ones, n) in by_c.items()]


def _logistic_fit(
    groups: list[tuple[float, int, int]], iterations: int = 50
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """Maximum likelihood (a, b) of y ~ a + b x over (x, decisions with y = 1, decisions) and the
    diagonal of the inverse information."""
    a, b = 0.0, 1.0
    for _ in range(iterations):
        g0 = g1 = h00 = h01 = h11 = 0.0
        for x, ones, k in groups:
            eta = a + b * x
            p = 1 / (1 + math.exp(-eta)) if eta > -700 else 0.0
            w = k * p * (1 - p)
            residual = ones - k * p
            g0 += residual
            g1 += residual * x
            h00, h01, h11 = h00 + w, h01 + w * x, h11 + w * x * x
        det = h00 * h11 - h01 * h01
        if det <= 1e-12 * max(1.0, h00 * h11):
            return None
        da = (h11 * g0 - h01 * g1) / det
        db = (h00 * g1 - h01 * g0) / det
        a, b = a + da, b + db
        if abs(a) > 1e6 or abs(b) > 1e6:
            return None
        if abs(da) < 1e-10 and abs(db) < 1e-10:
            return (a, b), (h11 / det, h00 / det)
    return None


def recalibration_of(check: ConfidenceCheck) -> Recalibrate | None:
    """p' = expit(a + b * logit c) with the check's fitted (a, b) when its verdict is
    `miscalibrated` (docs/reference/calibration.md, A miscalibrated confidence), else None: every
    confidence-based figure of the query then judges with p'."""
    a, b = check["intercept"], check["slope"]
    if check["verdict"] != "miscalibrated" or a is None or b is None:
        return None
    return recalibration(a, b)
