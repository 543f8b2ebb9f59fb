"""The periods of a calibration trend (a day, an ISO week or a calendar month) and the figures of
one trend point (docs/reference/calibration.md, GET /trust-score/trend): pure functions, shared by
the trend of `calibration.selectors` and the reports' trend of `calibration.reporting`."""

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.db.models import F
from django.db.models.functions import TruncMonth, TruncWeek
from django.db.models.functions.datetime import TruncBase

from calibration import rules

if TYPE_CHECKING:
    from calibration.selectors import DayRange

INTERVALS = ["day", "week", "month"]


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


# Any: figures by name (counts, rates, intervals, labels), rendered as JSON
def trend_point(start: dt.date, sums: Mapping[str, float] | None, pi: float | None) -> dict[str, Any]:
    """A trend point: the period's figures with the window's AI accuracy `pi`, so that the points'
    scores are parts of the window's (docs/reference/calibration.md, GET /trust-score/trend)."""
    figures = rules.figures(sums or dict.fromkeys(rules.SUM_FIELDS, 0), pi=pi, skill=False)
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
    }


# Any: figures by name (counts, rates, intervals, labels), rendered as JSON
def trend_summary(points: list[dict[str, Any]]) -> dict[str, Any]:
    series = [(i, p["trust_score"]) for i, p in enumerate(points) if p["trust_score"] is not None]
    slope = rules.least_squares_slope(series)
    return {"direction": rules.trend_direction(slope), "slope": slope}
