"""Reads for trust calibration. Every figure comes from the per-user daily aggregates:
a user's profile sums at most `window_days` rows; the organization scope, risk users and
trend points group those rows in SQL."""

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Expression, F, FloatField, Q, QuerySet, Sum
from django.db.models.functions import Abs, Cast, NullIf, TruncMonth, TruncWeek
from django.utils import timezone

from calibration import rules
from calibration.models import ALL_MODELS, UserDailyAggregate
from keys.models import Customer


@dataclass(frozen=True)
class DayRange:
    start: dt.date
    end: dt.date  # inclusive

    @classmethod
    def last_days(cls, days: int, *, today: dt.date | None = None) -> "DayRange":
        end = today or timezone.now().date()
        return cls(end - dt.timedelta(days=days - 1), end)

    def as_dict(self) -> dict[str, str]:
        return {"from": self.start.isoformat(), "to": self.end.isoformat()}


def aggregate_rows(
    customer: Customer, *, days: DayRange, user_id: str | None = None, model_id: str | None = None
) -> QuerySet[UserDailyAggregate]:
    qs = UserDailyAggregate.objects.filter(
        customer=customer, model_key=model_id or ALL_MODELS, day__gte=days.start, day__lte=days.end
    )
    if user_id is not None:
        qs = qs.filter(user_id=user_id)
    return qs


def _sum_annotations() -> dict[str, Any]:
    return {f"s_{name}": Sum(name) for name in rules.SUM_FIELDS}


def _unprefix(row: Mapping[str, Any]) -> dict[str, float]:
    return {name: row.get(f"s_{name}") or 0 for name in rules.SUM_FIELDS}


def _scored_expr() -> Expression:
    expr: Any = F("s_outcome_n")
    for b in range(rules.BIN_COUNT):
        expr = expr + F(f"s_b{b}_n")
    return expr


def _trust_numerator_expr() -> Expression:
    """|O| * AR + |C| * (1 - RCE) of one group, in SQL (see rules.trust_numerator)."""
    expr: Any = Cast(F("s_ar_num"), FloatField())
    for b in range(rules.BIN_COUNT):
        expr = expr + F(f"s_b{b}_n") - Abs(F(f"s_b{b}_followed") - F(f"s_b{b}_conf"))
    return expr


def _per_user(qs: QuerySet, *group: str) -> QuerySet:
    """One row per user (and per extra group keys) with the summed columns, the scored
    decisions and the trust-score numerator."""
    return (
        qs.order_by()
        .values(*group, "user_id")
        .annotate(**_sum_annotations())
        .annotate(scored=_scored_expr(), ts_num=_trust_numerator_expr())
    )


# The hot path (every POST /calibrate): one precompiled statement instead of building 35
# Sum() expressions through the ORM each time (which cost more than the query itself).
_USER_SUMS_SQL = (
    "SELECT "  # noqa: S608 (fixed column and table names; every value is a parameter)
    + ", ".join(f"SUM({connection.ops.quote_name(name)})" for name in rules.SUM_FIELDS)
    + f" FROM {UserDailyAggregate._meta.db_table}"
    " WHERE customer_id = %s AND user_id = %s AND model_key = %s AND day >= %s AND day <= %s"
)


def user_sums(
    customer: Customer, *, user_id: str, days: DayRange, model_id: str | None = None
) -> dict[str, float]:
    """The user's summed columns over `days`: at most one row per day (index range scan)."""
    with connection.cursor() as cursor:
        cursor.execute(_USER_SUMS_SQL, [customer.pk, user_id, model_id or ALL_MODELS, days.start, days.end])
        row = cursor.fetchone() or ()
    return {
        name: (float(value) if name in rules.FLOAT_FIELDS else int(value)) if value is not None else 0
        for name, value in zip(rules.SUM_FIELDS, row, strict=False)
    }


def user_profile(
    customer: Customer, *, user_id: str, days: DayRange | None = None, model_id: str | None = None
) -> dict[str, Any]:
    """The per-user figures (docs/reference/calibration.md) over `days` (default the last 90 days)."""
    days = days or DayRange.last_days(rules.window_days())
    return {
        "user_id": user_id,
        **rules.figures(user_sums(customer, user_id=user_id, days=days, model_id=model_id)),
    }


def weighted_user_means(sums: Mapping[str, float], ts_num: float, scored_total: float) -> dict[str, Any]:
    """Organization figures: rates over all decisions; trust_score and calibration_gap are
    the users' figures weighted by their scored decisions (sum of numerators over the sum
    of scored decisions, so one user's over-trust never cancels another's under-trust)."""
    figures = rules.figures(sums)
    score = None if not scored_total else min(1.0, max(0.0, ts_num / scored_total))
    gap = None if not scored_total else sums["gap_sum"] / scored_total
    figures["trust_score"] = rules.r6(score)
    figures["calibration_gap"] = rules.r6(gap)
    figures["category"] = rules.user_category(figures["decisions"], gap)
    figures["risk_level"] = rules.risk_level(score)
    return figures


def organization_figures(
    customer: Customer, *, days: DayRange, model_id: str | None = None
) -> dict[str, Any]:
    qs = aggregate_rows(customer, days=days, model_id=model_id)
    sums = _unprefix(qs.aggregate(**_sum_annotations()))
    # The per-user numerators are grouped in SQL; adding one number per user happens here.
    weighted = sum(row["ts_num"] or 0.0 for row in _per_user(qs))
    return weighted_user_means(sums, weighted, rules.scored(sums))


def risk_users(
    customer: Customer, *, days: DayRange, model_id: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Users with at least 20 decisions and trust_score < 0.6, worst first (computed in SQL)."""
    qs = (
        _per_user(aggregate_rows(customer, days=days, model_id=model_id))
        .annotate(ts=F("ts_num") / Cast(NullIf(F("scored"), 0), FloatField()))
        .filter(Q(s_n__gte=rules.risk_user_min_decisions()) & Q(ts__lt=rules.risk_high_below()))
        .order_by("ts", "user_id")[:limit]
    )
    out = []
    for row in qs:
        figures = rules.figures(_unprefix(row))
        out.append(
            {
                "user_id": row["user_id"],
                "trust_score": figures["trust_score"],
                "decisions": figures["decisions"],
                "category": figures["category"],
                "overtrust_rate": figures["overtrust_rate"],
                "undertrust_rate": figures["undertrust_rate"],
            }
        )
    return out


INTERVALS = ["day", "week", "month"]


def period_start(day: dt.date, interval: str) -> dt.date:
    if interval == "week":
        return max(dt.date.min, day - dt.timedelta(days=min(day.weekday(), day.toordinal() - 1)))
    if interval == "month":
        return day.replace(day=1)
    return day


def periods(days: DayRange, interval: str) -> list[dt.date]:
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


def _period_expr(interval: str) -> Any:
    if interval == "week":
        return TruncWeek("day")
    if interval == "month":
        return TruncMonth("day")
    return F("day")


def _as_date(value: Any) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value


def trend(
    customer: Customer,
    *,
    days: DayRange,
    interval: str,
    user_id: str | None = None,
    model_id: str | None = None,
) -> dict[str, Any]:
    """Zero-filled points per period (docs/reference/calibration.md, GET /trust-score/trend), with a
    least-squares slope of the trust score."""
    qs = aggregate_rows(customer, days=days, user_id=user_id, model_id=model_id).annotate(
        period=_period_expr(interval)
    )
    sums_by_period: dict[dt.date, list[dict[str, float]]] = defaultdict(list)
    weighted: dict[dt.date, float] = defaultdict(float)
    for row in _per_user(qs, "period"):
        key = _as_date(row["period"])
        sums_by_period[key].append(_unprefix(row))
        weighted[key] += row["ts_num"] or 0.0
    points: list[dict[str, Any]] = []
    for start in periods(days, interval):
        rows = sums_by_period.get(start)
        if not rows:
            points.append(
                {
                    "period_start": start.isoformat(),
                    "decisions": 0,
                    "trust_score": None,
                    "agreement_rate": None,
                    "overtrust_count": 0,
                    "undertrust_count": 0,
                }
            )
            continue
        sums = rules.add_sums(rows)
        figures = weighted_user_means(sums, weighted[start], rules.scored(sums))
        points.append(
            {
                "period_start": start.isoformat(),
                "decisions": figures["decisions"],
                "trust_score": figures["trust_score"],
                "agreement_rate": figures["agreement_rate"],
                "overtrust_count": int(sums["overtrust"]),
                "undertrust_count": int(sums["undertrust"]),
            }
        )
    series = [(i, p["trust_score"]) for i, p in enumerate(points) if p["trust_score"] is not None]
    slope = rules.least_squares_slope(series)
    return {"points": points, "trend": {"direction": rules.trend_direction(slope), "slope": round(slope, 6)}}


def user_calibration_list(
    customer: Customer, *, days: DayRange, model_id: str | None = None, limit: int = 500
) -> list[dict[str, Any]]:
    """Every user's calibration figures over `days`, risk users first (at least the risk minimum of decisions
    and a trust score under the high-risk bound), then by trust score, lowest first; users without a
    score last."""
    out = []
    for row in _per_user(aggregate_rows(customer, days=days, model_id=model_id)):
        figures = rules.figures(_unprefix(row))
        out.append({"user_id": row["user_id"], "at_risk": rules.is_risk_user(figures), **figures})
    out.sort(
        key=lambda u: (not u["at_risk"], u["trust_score"] is None, u["trust_score"] or 0.0, u["user_id"])
    )
    return out[:limit]
