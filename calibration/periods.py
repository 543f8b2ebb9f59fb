"""The periods of a calibration trend (a day, an ISO week or a calendar month) and the figures of
one trend point (docs/reference/calibration.md, GET /trust-score/trend): pure functions, shared by
the trend of `calibration.selectors` and the reports' trend of `calibration.reporting`."""

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING

from django.db.models import F
from django.db.models.functions import TruncMonth, TruncWeek
from django.db.models.functions.datetime import TruncBase

from audit.measures_stats import trend_direction, wls_slope
from calibration import rules
from calibration.documents import Interval, TrendPoint, TrendSummary

if TYPE_CHECKING:
    from calibration.selectors import DayRange

INTERVALS: list[Interval] = ["day", "week", "month"]


def period_start(day: dt.date, interval: str) -> dt.date:
    if interval == "week":
        return max(dt.date.min, day - dt.timedelta(days=min(day.weekday(), day.toordinal() - 1)))
    if interval == "month":
        return day.replace(day=1)
    return day


def periods(days: "DayRange", interval: str) -> list[dt.date]:
    out: list[dt.date] = []
    current = period_start(days.start, interval)
    while current <= days.end:
        out.append(current)
        try:
            if interval == "day":
                current += dt.timedelta(days=1)
            elif interval == "week":
                current += dt.timedelta(days=7)
            else:
                current = (current.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        except OverflowError:  # the window ends in the calendar's last period
            break
    return out


def period_expr(interval: str) -> TruncBase | F:
    if interval == "week":
        return TruncWeek("day")
    if interval == "month":
        return TruncMonth("day")
    return F("day")


def as_date(value: dt.date | dt.datetime) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value


def period_end(start: dt.date, interval: str) -> dt.date:
    """The last day of the period that begins on `start` (the calendar's last day at its edge)."""
    try:
        if interval == "week":
            return start + dt.timedelta(days=6)
        if interval == "month":
            return (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
    except OverflowError:
        return dt.date.max
    return start


def complete(start: dt.date, interval: str, first: dt.date, last: dt.date) -> bool:
    """Whether the period that begins on `start` lies wholly inside the days [first, last]."""
    return start >= first and period_end(start, interval) <= last


def trend_point(
    start: dt.date, sums: Mapping[str, float] | None, pi: float | None, *, recalibrated: bool = False
) -> TrendPoint:
    """A trend point: the period's figures with the window's AI accuracy `pi`, so that the points'
    scores are parts of the window's (docs/reference/calibration.md, GET /trust-score/trend)."""
    figures = rules.figures(
        sums or dict.fromkeys(rules.SUM_FIELDS, 0), pi=pi, skill=False, recalibrated=recalibrated
    )
    return {
        "period_start": start.isoformat(),
        "decisions": figures["decisions"],
        "scored_decisions": figures["scored_decisions"],
        "trust_score": figures["trust_score"],
        "attainable_score": figures["attainable_score"],
        "reliance_gap": figures["reliance_gap"],
        "agreement_rate": figures["agreement_rate"],
        "overtrust_count": int(sums["overtrust"]) if sums else 0,
        "undertrust_count": int(sums["undertrust"]) if sums else 0,
        "followed_ai_errors": int(sums["oo_followed_wrong"]) if sums else 0,
    }


def trend_summary(points: list[TrendPoint], complete_periods: list[bool]) -> TrendSummary:
    """The trend's direction from the reliance gap R of the complete periods with scored decisions,
    by weighted least squares (each point weighs its scored decisions): docs/reference/calibration.md,
    GET /trust-score/trend."""
    series = [
        (float(i), p["reliance_gap"], float(p["scored_decisions"]))
        for i, (p, whole) in enumerate(zip(points, complete_periods, strict=True))
        if whole and p["reliance_gap"] is not None and p["scored_decisions"] > 0
    ]
    fit = wls_slope(series)
    return {
        "direction": trend_direction(fit, len(series)),
        "slope": fit[0] if fit else None,
        "slope_se": fit[1] if fit else None,
        "periods_fitted": len(series),
    }
