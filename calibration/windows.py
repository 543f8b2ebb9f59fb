"""The trust score and its trend over a window, as POST /trust-score and GET /trust-score/trend
answer them (docs/reference/calibration.md). The API's views and the console's reviewer page both
read them here, so a page shows the API's figures to the digit.

Whole days are read from the daily aggregates; a bound inside a day, or a confidence the check
finds miscalibrated (then every confidence-based figure is judged with the recalibrated p'), is
read from the decisions of the window."""

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from audit import selectors as audit_selectors
from audit.measures import Figures
from calibration import reporting, selectors
from calibration.confidence import ConfidenceCheck
from calibration.documents import Interval, ListedRiskUser, Trend, UserRow
from calibration.selectors import DayRange
from config.timeutils import iso8601
from keys.models import Customer

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from audit.models import Decision

Exact = tuple[dt.datetime, dt.datetime] | None


@dataclass(frozen=True)
class TrustWindow:
    figures: Figures  # a user's (with its user_id) or the organisation's
    risk_users: list[ListedRiskUser]
    confidence_check: ConfidenceCheck
    window: dict[str, str | None]


def decisions_of(
    customer: Customer, window: tuple[dt.datetime, dt.datetime], *, user_id: str | None, model_id: str | None
) -> "QuerySet[Decision]":
    return audit_selectors.decision_set(
        customer,
        since=window[0],
        until=window[1],
        user_ids=[user_id] if user_id else None,
        model_ids=[model_id] if model_id else None,
    )


def next_day(instant: dt.datetime) -> dt.date:
    """The first whole day at or after `instant` (UTC)."""
    day = instant.astimezone(dt.UTC).date()
    return day if instant.astimezone(dt.UTC).time() == dt.time.min else day + dt.timedelta(days=1)


def day_bounds(days: DayRange) -> tuple[dt.datetime, dt.datetime]:
    """The instants [start of the first day, start of the day after the last) in UTC."""
    start = dt.datetime.combine(days.start, dt.time.min, tzinfo=dt.UTC)
    if days.end >= dt.date.max:  # the day after 9999-12-31 is not a date: its last instant ends it
        return start, dt.datetime.max.replace(tzinfo=dt.UTC)
    return start, start + dt.timedelta(days=(days.end - days.start).days + 1)


def trust_score_window(
    customer: Customer, *, days: DayRange, exact: Exact, user_id: str | None, model_id: str | None
) -> TrustWindow:
    """The figures of POST /trust-score: the user's, or the organisation's with its risk users."""
    window: dict[str, str | None] = dict(days.as_dict())
    at_risk: list[ListedRiskUser] = []
    figures: Figures
    span = exact or day_bounds(days)
    # The confidence check over the organisation's decisions of the window and model filter;
    # when it rejects, every confidence-based figure is judged with the recalibrated p'.
    check, recalibrate = reporting.recalibration_for(
        decisions_of(customer, span, user_id=None, model_id=model_id)
    )
    if exact is not None or recalibrate is not None:
        # A bound inside a day or a recalibrated confidence: from the decisions of the window.
        decisions = decisions_of(customer, span, user_id=user_id, model_id=model_id)
        if user_id:
            figures = reporting.exact_user_figures(decisions, user_id=user_id, recalibrate=recalibrate)
        else:
            figures, at_risk = reporting.exact_figures(decisions, recalibrate=recalibrate)
        if exact is not None:
            window = {"from": iso8601(exact[0]), "to": iso8601(exact[1])}
    elif user_id:
        figures = selectors.user_profile(customer, user_id=user_id, days=days, model_id=model_id)
    else:
        organization = selectors.organization_window(customer, days=days, model_id=model_id)
        figures, at_risk = organization.figures, organization.risk_users
    return TrustWindow(figures=figures, risk_users=at_risk, confidence_check=check, window=window)


def user_calibration_window(
    customer: Customer, *, days: DayRange, model_id: str | None, limit: int = 500
) -> tuple[list[UserRow], bool]:
    """(every reviewer's figures over `days`, risk users first; whether they are judged with the
    recalibrated confidence): the rows of POST /trust-score's `risk_users` for every reviewer. From
    the daily aggregates, unless the confidence check over the organisation's decisions of the
    window rejects the AI's confidence; then from the decisions, with the recalibrated p'."""
    span = day_bounds(days)
    _, recalibrate = reporting.recalibration_for(
        decisions_of(customer, span, user_id=None, model_id=model_id)
    )
    if recalibrate is None:
        return selectors.user_calibration_list(customer, days=days, model_id=model_id, limit=limit), False
    decisions = decisions_of(customer, span, user_id=None, model_id=model_id)
    _, users = reporting.user_figures(decisions, recalibrate=recalibrate)
    return users[:limit], True


def trend_window(
    customer: Customer,
    *,
    days: DayRange,
    exact: Exact,
    interval: Interval,
    user_id: str | None,
    model_id: str | None,
) -> tuple[Trend, dict[str, str | None]]:
    """GET /trust-score/trend: (its points and trend, its window)."""
    bounds = exact or day_bounds(days)
    # A trend fits the confidence check once over its whole window, like the AI's accuracy.
    _, recalibrate = reporting.recalibration_for(
        decisions_of(customer, bounds, user_id=None, model_id=model_id)
    )
    if exact is None and recalibrate is None:
        return selectors.trend(
            customer, days=days, interval=interval, user_id=user_id, model_id=model_id
        ), dict(days.as_dict())
    # A bound inside a day (the edge periods hold only the decisions inside the window, and are not
    # fitted) or a recalibrated confidence: from the decisions of the window.
    decisions = decisions_of(customer, bounds, user_id=user_id, model_id=model_id)
    first = bounds[0].date() if exact is None else next_day(bounds[0])
    last = (bounds[1] - dt.timedelta(microseconds=1)).date()
    reported = reporting.trust_trend(
        decisions,
        start=bounds[0].date(),
        end=last,
        interval=interval,
        recalibrate=recalibrate,
        first=first,
        last=last if exact is None or bounds[1].time() == dt.time.min else last - dt.timedelta(days=1),
    )
    result: Trend = {"points": reported["points"], "trend": reported["trend"]}
    if exact is not None:
        return result, {"from": iso8601(exact[0]), "to": iso8601(exact[1])}
    return result, dict(days.as_dict())
