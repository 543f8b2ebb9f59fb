"""Reads for trust calibration. Every figure comes from the per-user daily aggregates:
a user's profile sums at most `window_days` rows; the organization scope, risk users and
trend points group those rows in SQL."""

import datetime as dt
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from operator import itemgetter
from typing import cast

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from audit.measures import Figures, RiskUser, Thresholds, accuracy
from calibration import rules
from calibration.documents import ListedRiskUser, Trend, UserFigures, UserRow
from calibration.models import ALL_MODELS, RiskUserState, UserDailyAggregate, UserWeeklyAggregate
from calibration.periods import as_date, complete, period_expr, periods, trend_point, trend_summary
from config.db import prepared
from config.sqlparams import SQLValue
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


def _typed(names: list[str], row: Sequence[float | Decimal | None]) -> dict[str, float]:
    return {
        name: (float(value) if name in rules.FLOAT_FIELDS else int(value)) if value is not None else 0
        for name, value in zip(names, row, strict=False)
    }


_TABLE = UserDailyAggregate._meta.db_table
_WHERE = "customer_id = %s AND model_key = %s AND day >= %s AND day <= %s"
_Q = connection.ops.quote_name

# The hot path (every POST /calibrate): one precompiled statement instead of building 31
# Sum() expressions through the ORM each time (which cost more than the query itself).
# The rows are summed in the order of their day (a sum of floats depends on the order of its
# terms, and the order rows lie in their pages is not theirs: docs/architecture.md, Calibration
# aggregates); the unique index's range scan reads them in that order already.
_COLUMNS = ", ".join(_Q(name) for name in rules.SUM_FIELDS)
_USER_SUMS_SQL = (
    "SELECT "  # noqa: S608 (fixed column and table names; every value is a parameter)
    + ", ".join(f"SUM({_Q(name)})" for name in rules.SUM_FIELDS)
    + f" FROM (SELECT {_COLUMNS} FROM {_TABLE} WHERE {_WHERE} AND user_id = %s ORDER BY day) user_rows"  # noqa: S608
)


def _window(customer: Customer, days: DayRange, model_id: str | None) -> list[SQLValue]:
    return [customer.pk, model_id or ALL_MODELS, days.start, days.end]


def user_sums(
    customer: Customer, *, user_id: str, days: DayRange, model_id: str | None = None
) -> dict[str, float]:
    """The user's summed columns over `days`: at most one row per day (index range scan), a
    prepared statement on PostgreSQL (see fetch_rows)."""
    rows = fetch_rows(_USER_SUMS_SQL, [*_window(customer, days, model_id), user_id])
    return _typed(rules.SUM_FIELDS, cast("Sequence[float | Decimal | None]", rows[0] if rows else ()))


def user_profile(
    customer: Customer, *, user_id: str, days: DayRange | None = None, model_id: str | None = None
) -> UserFigures:
    """The per-user figures (docs/reference/calibration.md) over `days` (default the last 90 days)."""
    days = days or DayRange.last_days(rules.window_days())
    return {
        "user_id": user_id,
        **rules.figures(user_sums(customer, user_id=user_id, days=days, model_id=model_id)),
    }


# One row per reviewer of the window with its summed columns: the organisation's sums, its
# reviewers-as-clusters sums and the risk users all come from these rows, so the window is
# grouped once per request. The window's whole ISO weeks are read from the weekly sums (one row
# per reviewer and week, kept by the database: calibration/weekly.py) and only its edge days
# from the daily rows, so a 90-day window groups about 25 rows per reviewer instead of 90.
# A count column is summed as a 4-byte integer (a reviewer's count in one row is far below
# 2^31): PostgreSQL sums a bigint column into numeric, which costs more than the grouping.
# A reviewer's rows are summed in the order of their day (a week's row at its Monday), and the
# reviewers come in the order of their id: a sum of floats depends on the order of its terms,
# and the order the rows lie in their pages is not theirs (docs/architecture.md, Calibration
# aggregates), so the figures never depend on where a row was written. The ids are ordered by
# their bytes (SQLite's own order; on PostgreSQL the "C" collation, whose comparisons cost far
# less in the sort than the database's locale).
_BYTEWISE = ' COLLATE "C"' if connection.vendor == "postgresql" else ""
_SUMS = ", ".join(
    f"SUM({_Q(name)})" if name in rules.FLOAT_FIELDS else f"SUM(CAST({_Q(name)} AS INTEGER))"
    for name in rules.SUM_FIELDS
)
_PER_USER_DAYS_SQL = (
    f"SELECT user_id, {_SUMS} FROM ("  # noqa: S608 (fixed column and table names; values are parameters)
    f"SELECT user_id{_BYTEWISE} AS user_id, day, {_COLUMNS} FROM {_TABLE} WHERE {_WHERE} ORDER BY 1, 2"
    ") window_rows GROUP BY user_id ORDER BY user_id"
)
_PER_USER_WEEKS_SQL = (
    f"SELECT user_id, {_SUMS} FROM ("  # noqa: S608 (fixed column and table names; values are parameters)
    f"SELECT user_id{_BYTEWISE} AS user_id, week AS at_day, {_COLUMNS} FROM {UserWeeklyAggregate._meta.db_table} "
    "WHERE customer_id = %s AND model_key = %s AND week >= %s AND week <= %s "
    f"UNION ALL SELECT user_id, day, {_COLUMNS} FROM {_TABLE} "
    "WHERE customer_id = %s AND model_key = %s AND ((day >= %s AND day < %s) OR (day > %s AND day <= %s))"
    " ORDER BY 1, 2) window_rows GROUP BY user_id ORDER BY user_id"
)


def whole_weeks(days: DayRange) -> tuple[dt.date, dt.date] | None:
    """The Mondays of the first and the last ISO week lying wholly inside `days`, or None."""
    week = dt.timedelta(days=7)
    if (days.end - days.start).days < 6 or days.end >= dt.date.max - week or days.end <= dt.date.min + week:
        return None  # too short for a week, or at the calendar's edge (a report's open end)
    first = days.start + dt.timedelta(days=-days.start.weekday() % 7)
    last = days.end - dt.timedelta(days=(days.end.weekday() + 1) % 7) - dt.timedelta(days=6)
    return (first, last) if first <= last else None


def fetch_rows(sql: str, params: Sequence[SQLValue]) -> list[tuple[object, ...]]:
    """All rows of `sql`. On PostgreSQL a prepared statement (planned once per connection) whose
    rows come in the binary format: about 32,000 numbers for 1,000 reviewers, which the text
    format would have the server print and psycopg parse again (docs/architecture.md, Calibration
    aggregates). Each row's values as the driver reads them: the caller knows their types from its
    statement's columns."""
    if connection.vendor == "postgresql":
        with prepared.cursor(binary=True) as bound:
            bound.execute(sql, params)
            rows: list[tuple[object, ...]] = bound.fetchall()
            return rows
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


# The window's rows are sorted by reviewer and day before they are summed (see _SUMS): about
# 6 MB of rows for 1,000 reviewers over 90 days, over PostgreSQL's default sort memory (4 MB),
# where the sort went to disk; the memory is raised for that one statement's transaction.
_WINDOW_SORT_MEMORY = "64MB"


def _fetch_sorted(sql: str, params: Sequence[SQLValue]) -> list[tuple[object, ...]]:
    """fetch_rows, with room for the statement's sort in memory on PostgreSQL."""
    if connection.vendor != "postgresql":
        return fetch_rows(sql, params)
    with transaction.atomic():
        with prepared.cursor() as bound:
            bound.execute("SELECT set_config('work_mem', %s, true)", [_WINDOW_SORT_MEMORY])
        return fetch_rows(sql, params)


# A row of `_per_user_rows`: the user id, then its sums (ints and floats).
type PerUserRow = tuple[str, *tuple[float, ...]]


def _per_user_rows(customer: Customer, days: DayRange, model_id: str | None) -> list[PerUserRow]:
    """One row per reviewer of the window: the user id, then the sums in SUM_FIELDS order (each an
    int or a float: no NULL in a group, no numeric; see _SUMS)."""
    weeks = whole_weeks(days)
    if weeks is None:
        rows = _fetch_sorted(_PER_USER_DAYS_SQL, _window(customer, days, model_id))
        return cast("list[PerUserRow]", rows)
    first, last = weeks
    key = [customer.pk, model_id or ALL_MODELS]
    sunday = last + dt.timedelta(days=6)
    rows = _fetch_sorted(_PER_USER_WEEKS_SQL, [*key, first, last, *key, days.start, first, sunday, days.end])
    return cast("list[PerUserRow]", rows)


def _per_user_sums(
    customer: Customer, days: DayRange, model_id: str | None
) -> list[tuple[str, dict[str, float]]]:
    return [
        (row[0], dict(zip(rules.SUM_FIELDS, row[1:], strict=True)))
        for row in _per_user_rows(customer, days, model_id)
    ]


def _at(name: str) -> int:
    """A sum's position in a row of `_per_user_rows`."""
    return 1 + rules.SUM_FIELDS.index(name)


_RISK_SUMS = itemgetter(*map(_at, rules.RISK_USER_FIELDS))
_SCORED, _FWO, _WO, _UWU, _WU = map(_at, ("scored_n", "fwo_sum", "wo_sum", "uwu_sum", "wu_sum"))


# A reviewer's risk-user figures are a function of its 13 sums and the settings alone, and most
# reviewers' sums have not changed since the organisation's last request (only those who wrote
# since, or whose edge days moved), so each web process remembers the figures of the sums it
# has judged: a reviewer whose sums are the same, bit for bit, is not judged again. The key is
# the sums packed as IEEE doubles, so two sums that compare equal but differ in their bits
# (0.0 and -0.0) are different keys; a count packs exactly (far below 2**53), and the figures
# read a count and the same number as a float alike. Kept per settings, forgotten whole when it
# grows past RISK_JUDGED_KEPT entries (memory, not correctness: a forgotten key is judged again).
RISK_JUDGED_KEPT = 200_000
_RISK_KEY = struct.Struct(f"<{len(rules.RISK_USER_FIELDS)}d").pack
# figures by packed sums, None for a reviewer who is not a risk user
_risk_judged: dict[Thresholds, dict[bytes, RiskUser | None]] = {}


def _judged(th: Thresholds) -> dict[bytes, RiskUser | None]:
    """The figures this process has judged under the settings `th`, by packed sums."""
    judged = _risk_judged.get(th)
    if judged is None or len(judged) > RISK_JUDGED_KEPT:
        _risk_judged.clear()  # settings changed or too many kept: start again
        judged = _risk_judged[th] = {}
    return judged


RISK_USERS_LISTED = 100  # POST /v1/trust-score lists the first 100 (all of them are flagged)


@dataclass(frozen=True)
class OrganizationWindow:
    """An organisation's window read once: its figures and all its risk users, in order."""

    figures: Figures
    risk_users: list[ListedRiskUser]


def organization_window(
    customer: Customer, *, days: DayRange, model_id: str | None = None
) -> OrganizationWindow:
    """An organisation's figures (every scored decision of the window weighs the same, the rates'
    effective n with reviewers as clusters: docs/reference/calibration.md, Organisation figures)
    and its risk users (docs/reference/calibration.md, Risk users: users with enough scored
    decisions whose risk level is high or whose category is flagged, largest reliance gap
    first), from one grouping of the window's rows by reviewer."""
    rows = _per_user_rows(customer, days, model_id)
    columns = list(zip(*rows, strict=True)) if rows else [()] * (1 + len(rules.SUM_FIELDS))
    sums = {
        name: (math.fsum if name in rules.FLOAT_FIELDS else sum)(columns[at])
        for at, name in enumerate(rules.SUM_FIELDS, start=1)
    }
    over = rules.Clusters.of(zip(columns[_FWO], columns[_WO], strict=True))
    under = rules.Clusters.of(zip(columns[_UWU], columns[_WU], strict=True))
    th = rules.thresholds()
    judged = _judged(th)
    at_risk: list[ListedRiskUser] = []
    for row in rows:
        if cast(float, row[_SCORED]) < th.risk_min_scored:  # a sum (the index is past the user id)
            continue  # never a risk user (rules.risk_user_figures would say so)
        values = _RISK_SUMS(row)
        key = _RISK_KEY(*values)
        if key in judged:
            figures = judged[key]
        else:
            figures = judged[key] = rules.risk_user_figures(
                dict(zip(rules.RISK_USER_FIELDS, values, strict=True)), th
            )
        if figures is not None:
            at_risk.append({"user_id": row[0], **figures})
    at_risk.sort(key=_by_reliance_gap)
    return OrganizationWindow(rules.figures(sums, over=over, under=under, th=th), at_risk)


def _by_reliance_gap(user: ListedRiskUser) -> tuple[float, str]:
    return -(user["reliance_gap"] or 0.0), user["user_id"]


def organization_figures(customer: Customer, *, days: DayRange, model_id: str | None = None) -> Figures:
    """An organisation's figures over `days` (see `organization_window`)."""
    return organization_window(customer, days=days, model_id=model_id).figures


def risk_users(
    customer: Customer, *, days: DayRange, model_id: str | None = None, limit: int | None = None
) -> list[ListedRiskUser]:
    """The risk users over `days`, largest reliance gap first (see `organization_window`)."""
    return organization_window(customer, days=days, model_id=model_id).risk_users[:limit]


def risk_user_state(customer: Customer, user_id: str) -> RiskUserState | None:
    """Whether the user is a risk user now, and when risk_user.identified last fired for them."""
    return RiskUserState.objects.filter(customer=customer, user_id=user_id).first()


_FLAGGED_SQL = (
    f"SELECT 1 FROM {RiskUserState._meta.db_table} WHERE customer_id = %s AND user_id = %s AND at_risk"  # noqa: S608 (the model's table; values are parameters)
)


def risk_user_flagged(customer: Customer, user_id: str) -> bool:
    """Whether the user is flagged as a risk user now: a fixed text, prepared on PostgreSQL (every
    POST /calibrate of a user at risk reads it; the ORM's query cost more than the statement)."""
    return bool(fetch_rows(_FLAGGED_SQL, [customer.pk, user_id]))


RISK_USER_KEYS = tuple(RiskUser.__annotations__)  # a risk user's figures, in the list's order


def _period_sums(
    customer: Customer, *, days: DayRange, interval: str, user_id: str | None, model_id: str | None
) -> dict[dt.date, dict[str, float]]:
    """The summed columns per period of `interval`, each period's rows summed in the order of
    their day and reviewer (not in the order they lie in their pages; see _SUMS)."""
    rows = (
        aggregate_rows(customer, days=days, user_id=user_id, model_id=model_id)
        .annotate(period=period_expr(interval))
        .order_by("day", "user_id")
        .values("period", *rules.SUM_FIELDS)
    )
    inner, params = rows.query.sql_with_params()
    sums = ", ".join(f"SUM({_Q(name)})" for name in rules.SUM_FIELDS)
    sql = f"SELECT period, {sums} FROM ({inner}) period_rows GROUP BY period"  # noqa: S608 (the ORM's SQL; values are parameters)
    rows = cast("list[PeriodRow]", fetch_rows(sql, list(params)))
    return {_day_of(row[0]): _typed(rules.SUM_FIELDS, row[1:]) for row in rows}


# A row of `_period_sums`: the period's start (a date, a timestamp or SQLite's text), then its sums.
type PeriodRow = tuple[dt.date | dt.datetime | str, *tuple[float | Decimal | None, ...]]


def _day_of(value: dt.date | dt.datetime | str) -> dt.date:
    """A period's start as read by plain SQL: a date or a timestamp, or on SQLite its text."""
    return dt.date.fromisoformat(value[:10]) if isinstance(value, str) else as_date(value)


def trend(
    customer: Customer,
    *,
    days: DayRange,
    interval: str,
    user_id: str | None = None,
    model_id: str | None = None,
) -> Trend:
    """Zero-filled points per period (docs/reference/calibration.md, GET /trust-score/trend), with a
    weighted least-squares slope of the reliance gap over the complete periods. One GROUP BY period
    in SQL."""
    by_period = _period_sums(customer, days=days, interval=interval, user_id=user_id, model_id=model_id)
    pi = accuracy(rules.add_sums(by_period.values()))
    starts = periods(days, interval)
    points = [trend_point(start, by_period.get(start), pi) for start in starts]
    whole = [complete(start, interval, days.start, days.end) for start in starts]
    return {"points": points, "trend": trend_summary(points, whole)}


def user_calibration_list(
    customer: Customer, *, days: DayRange, model_id: str | None = None, limit: int = 500
) -> list[UserRow]:
    """Every user's calibration figures over `days`, risk users first (docs/reference/calibration.md, Risk
    users), then by reliance gap, largest first; users without a score last."""
    out: list[UserRow] = []
    th = rules.thresholds()
    for user_id, sums in _per_user_sums(customer, days, model_id):
        figures = rules.figures(sums, th=th)
        out.append({"user_id": user_id, "at_risk": rules.is_risk_user(figures, th), **figures})
    out.sort(
        key=lambda u: (not u["at_risk"], u["reliance_gap"] is None, -(u["reliance_gap"] or 0.0), u["user_id"])
    )
    return out[:limit]


def model_ids_with_decisions(customer: Customer, model_id: str | None = None) -> list[str]:
    """The model ids the customer's decisions name (vigilance probes aside), sorted; with
    `model_id`, that one if it has decisions. From the daily aggregates (a row per reviewer, model
    and day), not from the decisions themselves."""
    rows = UserDailyAggregate.objects.filter(customer=customer).exclude(model_key=ALL_MODELS)
    if model_id is not None:
        rows = rows.filter(model_key=model_id)
    return list(rows.order_by("model_key").values_list("model_key", flat=True).distinct())
