"""The arithmetic of the oversight figures, free of the database (docs/reference/oversight.md):
the review-time threshold, the Wilson score interval, d' with the log-linear correction and
the evidence level. Every figure is computed from counts, never from decisions."""

import math
from statistics import NormalDist
from typing import TypedDict

from django.conf import settings

Z95 = 1.959964  # the two-sided 95 % normal quantile, as the rule fixes it
MIN_TIMED_FOR_MEDIAN = 20
MIN_TIMED_FOR_FLAG = 20
FLAG_RATE = 0.2
REVIEW_WINDOW_DAYS = 30
VIGILANCE_WINDOW_DAYS = 90
EVIDENCE_INDICATIVE_FROM = 30  # known_wrong probes
EVIDENCE_SUFFICIENT_FROM = 100
RUBBER_STAMP_REPEAT_HOURS = 24
DECIMALS = 4

_NORMAL = NormalDist()


def floor_seconds() -> float:
    return float(getattr(settings, "OVERSIGHT_FLOOR_SECONDS", 3.0))


def median_fraction() -> float:
    return float(getattr(settings, "OVERSIGHT_MEDIAN_FRACTION", 0.5))


class Rule(TypedDict):
    floor_seconds: float
    median_fraction: float
    min_timed_for_median: int
    flag_rate: float
    min_timed_for_flag: int


def rule() -> Rule:
    """The rule as GET /oversight/review-effort states it."""
    return {
        "floor_seconds": floor_seconds(),
        "median_fraction": median_fraction(),
        "min_timed_for_median": MIN_TIMED_FOR_MEDIAN,
        "flag_rate": FLAG_RATE,
        "min_timed_for_flag": MIN_TIMED_FOR_FLAG,
    }


def threshold_seconds(*, timed: int, median: float | None) -> float:
    """max(floor, fraction x median) for a model with at least 20 timed decisions, else the floor."""
    if timed < MIN_TIMED_FOR_MEDIAN or median is None:
        return floor_seconds()
    return max(floor_seconds(), median_fraction() * median)


def rate(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator


def rounded(value: float | None, decimals: int = DECIMALS) -> float | None:
    return None if value is None else round(value, decimals)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of successes / n (no continuity correction); None for n = 0."""
    if n == 0:
        return None
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_rounded(successes: int, n: int) -> list[float] | None:
    interval = wilson(successes, n)
    return None if interval is None else [round(interval[0], DECIMALS), round(interval[1], DECIMALS)]


def d_prime(*, caught: int, known_wrong: int, false_overrides: int, known_right: int) -> float | None:
    """z(H) - z(F) with the log-linear correction: H = (caught + 0.5) / (known_wrong + 1),
    F = (false_overrides + 0.5) / (known_right + 1). None when either kind has no probe."""
    if known_wrong == 0 or known_right == 0:
        return None
    hit = (caught + 0.5) / (known_wrong + 1)
    false_alarm = (false_overrides + 0.5) / (known_right + 1)
    return _NORMAL.inv_cdf(hit) - _NORMAL.inv_cdf(false_alarm)


def evidence(known_wrong: int) -> str:
    if known_wrong < EVIDENCE_INDICATIVE_FROM:
        return "insufficient"
    if known_wrong < EVIDENCE_SUFFICIENT_FROM:
        return "indicative"
    return "sufficient"
