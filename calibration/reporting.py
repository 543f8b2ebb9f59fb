"""The calibration figures (docs/reference/calibration.md) over any set of decisions (a compliance report's
filtered decisions, a window with a bound inside a day), from the same sums as the daily aggregates.

The decisions are grouped in SQL by every value the figures depend on (user, recommendation,
decision, initial decision, outcome, confidence, category); each group adds `rules.contribution`
of its record times its size, so the figures are the API's to the digit. The grouping costs time
in proportion to the distinct groups of the window, which is why the API's default and date
windows read the daily aggregates instead."""

import datetime as dt
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate, TruncMonth, TruncWeek

from audit import selectors as audit_selectors
from audit.measures import Figures, accuracy
from audit.measures_stats import Recalibrate
from calibration import rules
from calibration.confidence import ConfidenceCheck, confidence_check, recalibration_of
from calibration.documents import (
    ConfidenceBand,
    Interval,
    IntervalTrend,
    ListedRiskUser,
    ModelSeen,
    OrganisationFigures,
    UserFigures,
    UserRow,
)
from calibration.periods import complete, periods, trend_point, trend_summary
from calibration.selectors import DayRange, fetch_rows
from config.sqlparams import SQLValue
from keys.models import Customer

if TYPE_CHECKING:
    from audit.models import Decision

_TRUNC = {"day": TruncDate, "week": TruncWeek, "month": TruncMonth}
_VALUES = [
    "ai_recommendation",
    "user_decision",
    "initial_decision",
    "outcome",
    "ai_confidence",
    "calibration_category",
]
BANDS = 5  # the confidence bands of the reports: [0, 0.2), [0.2, 0.4), ..., [0.8, 1.0]
CONFIDENCE_CHECK_LIMIT = 10_000  # the latest decisions with a confidence and an outcome the check reads


# Any: the values of the grouping columns the caller names
def _groups(
    decisions: QuerySet["Decision"], *keys: str
) -> Iterator[tuple[tuple[Any, ...], rules.Record, int]]:
    rows = decisions.order_by().values(*keys, *_VALUES).annotate(g_n=Count("pk"))
    for row in rows.iterator(chunk_size=2000):
        record = rules.Record(
            ai_recommendation=row["ai_recommendation"],
            user_decision=row["user_decision"],
            confidence=row["ai_confidence"],
            outcome=row["outcome"],
            initial_decision=row["initial_decision"],
            category=row["calibration_category"],
        )
        yield tuple(row[k] for k in keys), record, row["g_n"]


def _add(into: dict[str, float], sums: Mapping[str, float], times: float = 1) -> None:
    for name, value in sums.items():
        into[name] = into.get(name, 0) + value * times


def _complete(sums: Mapping[str, float]) -> dict[str, float]:
    return {name: sums.get(name, 0) for name in rules.SUM_FIELDS}


# Any: the values of the grouping columns the caller names
def sums_by(
    decisions: QuerySet["Decision"], *keys: str, recalibrate: Recalibrate | None = None
) -> dict[tuple[Any, ...], dict[str, float]]:
    """The aggregate columns per value of `keys` over `decisions` (with the query's p' when the
    confidence check rejected the AI's confidence: `recalibrate`)."""
    out: dict[tuple[Any, ...], dict[str, float]] = defaultdict(dict)
    for key, record, n in _groups(decisions, *keys):
        _add(out[key], rules.contribution(record, recalibrate), n)
    return {key: _complete(sums) for key, sums in out.items()}


def user_figures(
    decisions: QuerySet["Decision"], *, recalibrate: Recalibrate | None = None
) -> tuple[OrganisationFigures, list[UserRow]]:
    """(the organisation's figures, one row per user, risk users first, then largest reliance gap) over
    `decisions`, by docs/reference/calibration.md, Organisation figures; with the query's p' when
    `recalibrate` is given (A miscalibrated confidence)."""
    organisation, per_user = _figures_by_user(decisions, recalibrate)
    users: list[UserRow] = [
        {"user_id": user_id, "at_risk": rules.is_risk_user(figures), **figures}
        for user_id, figures in per_user.items()
    ]
    users.sort(
        key=lambda u: (not u["at_risk"], u["reliance_gap"] is None, -(u["reliance_gap"] or 0.0), u["user_id"])
    )
    return organisation, users


def _figures_by_user(
    decisions: QuerySet["Decision"], recalibrate: Recalibrate | None
) -> tuple[OrganisationFigures, dict[str, Figures]]:
    """The organisation's figures and each user's, in the order the grouping gave them."""
    per_user = {key[0]: sums for key, sums in sums_by(decisions, "user_id", recalibrate=recalibrate).items()}
    sums = rules.add_sums(per_user.values())
    over = rules.Clusters.of((u["fwo_sum"], u["wo_sum"]) for u in per_user.values())
    under = rules.Clusters.of((u["uwu_sum"], u["wu_sum"]) for u in per_user.values())
    recalibrated = recalibrate is not None
    organisation: OrganisationFigures = {
        **rules.figures(sums, over=over, under=under, recalibrated=recalibrated),
        "counts": {
            "followed": int(sums["followed"]),
            "overridden": int(sums["n"] - sums["followed"]),
            "overtrust": int(sums["overtrust"]),
            "undertrust": int(sums["undertrust"]),
            "followed_ai_errors": int(sums["oo_followed_wrong"]),
            "with_confidence": int(sums["conf_n"]),
            "with_outcome": int(sums["outcome_n"]),
            "with_initial_decision": decisions.order_by().filter(initial_decision__isnull=False).count(),
        },
    }
    figures = {
        user_id: rules.figures(user_sums, recalibrated=recalibrated)
        for user_id, user_sums in per_user.items()
    }
    return organisation, figures


def decisions_confidence_check(decisions: QuerySet["Decision"]) -> ConfidenceCheck:
    """The confidence check (docs/reference/calibration.md, Confidence check) over the latest
    CONFIDENCE_CHECK_LIMIT decisions of `decisions` that have both a confidence and an outcome.

    One statement: the latest decisions (a backward scan of the partial index
    `audit_dec_conf_check`, index-only on PostgreSQL) grouped by (confidence, recommendation,
    outcome), so the rows never leave the database; a process that fitted the same rows already
    answers its remembered check (see `_checked`)."""
    latest = (
        decisions.filter(ai_confidence__isnull=False, outcome__isnull=False)
        .order_by("-timestamp", "-decision_id")
        .values_list("ai_confidence", "ai_recommendation", "outcome")[:CONFIDENCE_CHECK_LIMIT]
    )
    inner, params = latest.query.sql_with_params()
    return _latest_checked(inner, list(params), decisions.db)


def window_confidence_check(customer: Customer, *, since: dt.datetime, until: dt.datetime) -> ConfidenceCheck:
    """decisions_confidence_check over audit's decision_set(customer, since=since, until=until),
    from the statement's text written once (`audit.selectors.scored_latest_sql`): POST /calibrate
    reads it after every decision."""
    inner, params = audit_selectors.scored_latest_sql(
        customer, since=since, until=until, limit=CONFIDENCE_CHECK_LIMIT
    )
    return _latest_checked(inner, params, DEFAULT_DB_ALIAS)


def _latest_checked(inner: str, params: list[SQLValue], db: str) -> ConfidenceCheck:
    """The check over the rows of `inner` ((confidence, recommendation, outcome) of the latest
    decisions), grouped in SQL."""
    columns = "ai_confidence, ai_recommendation, outcome"
    sql = f"SELECT {columns}, COUNT(*) FROM ({inner}) latest GROUP BY {columns} ORDER BY {columns}"  # noqa: S608 (the ORM's SQL; values are parameters)
    if db == DEFAULT_DB_ALIAS:
        rows = cast(CheckRows, tuple(fetch_rows(sql, params)))  # on PostgreSQL prepared, the rows in binary
    else:
        with connections[db].cursor() as cursor:
            cursor.execute(sql, params)
            rows = tuple(cursor.fetchall())
    check = _checked.get(rows)
    if check is None:
        check = _confidence_check_of(rows)
        if len(_checked) >= CONFIDENCE_CHECKS_KEPT:
            _checked.clear()
        _checked[rows] = check
    return {**check, "limit": CONFIDENCE_CHECK_LIMIT}


def recalibration_for(decisions: QuerySet["Decision"]) -> tuple[ConfidenceCheck, Recalibrate | None]:
    """The confidence check over `decisions` (the organisation's of the query's window and model
    filter) and, when it finds the confidence miscalibrated, the query's p' (docs/reference/calibration.md,
    A miscalibrated confidence)."""
    check = decisions_confidence_check(decisions)
    return check, recalibration_of(check)


# The check is a function of its grouped rows alone (in the statement's fixed order), and they
# change only when a decision with both a confidence and an outcome enters the latest
# CONFIDENCE_CHECK_LIMIT (or the window's bounds move past one): each web process remembers the
# last few checks by their rows, compared whole (every value and count), so an unchanged set of
# decisions is not fitted again and gets the same figures to the bit.
CONFIDENCE_CHECKS_KEPT = 4
# (confidence, recommendation, outcome, count) rows
CheckRows = tuple[tuple[float, str, str, int], ...]
_checked: dict[CheckRows, ConfidenceCheck] = {}


def _confidence_check_of(rows: CheckRows) -> ConfidenceCheck:
    """The check over (confidence, recommendation, outcome, count) rows."""
    pairs: dict[tuple[float, int], int] = defaultdict(int)
    right: dict[tuple[str, str], int] = {}  # y per (recommendation, outcome): a few, compared once each
    for confidence, recommendation, outcome, n in rows:
        y = right.get((recommendation, outcome))
        if y is None:
            y = right[(recommendation, outcome)] = int(rules.same(outcome, recommendation))
        pairs[(confidence, y)] += n
    return confidence_check((c, y, n) for (c, y), n in sorted(pairs.items()))


def confidence_bands(decisions: QuerySet["Decision"]) -> list[ConfidenceBand]:
    """Agreement by AI confidence band: how often reviewers followed the AI at each confidence,
    against how often the AI was right where the outcome is known."""
    bands: list[dict[str, float]] = [{} for _ in range(BANDS)]
    for _, record, n in _groups(decisions):
        c = record.confidence
        if c is None:
            continue
        band = bands[min(BANDS - 1, max(0, int(c * BANDS)))]
        _add(band, rules.contribution(record), n)
    out: list[ConfidenceBand] = []
    for b, band in enumerate(bands):
        size = band.get("n", 0)
        outcomes = band.get("outcome_n", 0)
        out.append(
            {
                "band": f"{b / BANDS:.1f}-{(b + 1) / BANDS:.1f}",
                "decisions": int(size),
                "agreement_rate": band.get("followed", 0) / size if size else None,
                "mean_ai_confidence": band.get("conf_sum", 0) / size if size else None,
                "outcomes_known": int(outcomes),
                "ai_accuracy": band.get("ai_right_n", 0) / outcomes if outcomes else None,
                "overtrust_count": int(band.get("overtrust", 0)),
            }
        )
    return out


def trend_interval(start: dt.date, end: dt.date) -> Interval:
    """Daily points up to two months, weekly up to a year, monthly beyond."""
    days = (end - start).days + 1
    return "day" if days <= 62 else "week" if days <= 366 else "month"


def trust_trend(
    decisions: QuerySet["Decision"],
    *,
    start: dt.date,
    end: dt.date,
    interval: Interval | None = None,
    recalibrate: Recalibrate | None = None,
    first: dt.date | None = None,
    last: dt.date | None = None,
) -> IntervalTrend:
    """The trust-score trend over the days [start, end] with the rule of docs/reference/calibration.md,
    GET /trust-score/trend (the window's AI accuracy for every point), zero-filled, in `interval` or
    the one that suits the period's length. `first` and `last`: the whole days the window covers
    (default start and end); a period reaching beyond them is shown but not fitted."""
    interval = interval or trend_interval(start, end)
    trunc = _TRUNC[interval]("timestamp", tzinfo=dt.UTC)
    by_period = {
        (key[0].date() if isinstance(key[0], dt.datetime) else key[0]): sums
        for key, sums in sums_by(decisions.annotate(period=trunc), "period", recalibrate=recalibrate).items()
    }
    pi = accuracy(rules.add_sums(by_period.values()))
    recalibrated = recalibrate is not None
    starts = periods(DayRange(start, end), interval)
    points = [trend_point(period, by_period.get(period), pi, recalibrated=recalibrated) for period in starts]
    whole = [complete(period, interval, first or start, last or end) for period in starts]
    return {"interval": interval, "points": points, "trend": trend_summary(points, whole)}


def category_counts(decisions: QuerySet["Decision"]) -> dict[str, int]:
    """Decisions per record category, and `total` (one GROUP BY)."""
    rows = decisions.order_by().values("calibration_category").annotate(n=Count("pk"))
    counts = dict.fromkeys(rules.RECORD_CATEGORIES, 0)
    counts.update({row["calibration_category"]: row["n"] for row in rows})
    counts["total"] = sum(counts.values())
    return counts


def models_seen(decisions: QuerySet["Decision"]) -> list[ModelSeen]:
    """The models (and versions) behind the decisions, with their counts, most used first."""
    rows = (
        decisions.order_by()
        .values("model_id", "model_version")
        .annotate(decisions=Count("pk"), followed=Count("pk", filter=Q(followed_ai=True)))
        .order_by("-decisions", "model_id", "model_version")
    )
    return [
        {
            "model_id": row["model_id"],
            "model_version": row["model_version"],
            "decisions": row["decisions"],
            "agreement_rate": row["followed"] / row["decisions"],
        }
        for row in rows
    ]


def exact_figures(
    decisions: QuerySet["Decision"], *, recalibrate: Recalibrate | None = None
) -> tuple[OrganisationFigures, list[ListedRiskUser]]:
    """POST /trust-score over decisions selected by exact timestamps (a bound inside a day, which the daily
    aggregates cannot honour): (the organisation's figures, the risk users of
    docs/reference/calibration.md, Risk users). Grouped in SQL over the decisions in the window."""
    organisation, users = user_figures(decisions, recalibrate=recalibrate)
    at_risk: list[ListedRiskUser] = [
        {
            "user_id": u["user_id"],
            "trust_score": u["trust_score"],
            "reliance_gap": u["reliance_gap"],
            "risk_level": u["risk_level"],
            "decisions": u["decisions"],
            "scored_decisions": u["scored_decisions"],
            "category": u["category"],
            "overtrust_rate": u["overtrust_rate"],
            "overtrust_rate_ci": u["overtrust_rate_ci"],
            "undertrust_rate": u["undertrust_rate"],
            "undertrust_rate_ci": u["undertrust_rate_ci"],
        }
        for u in users
        if u["at_risk"]
    ]
    return organisation, at_risk


def exact_user_figures(
    decisions: QuerySet["Decision"], *, user_id: str, recalibrate: Recalibrate | None = None
) -> UserFigures:
    """The user's figures of POST /trust-score over decisions selected by exact timestamps (see
    `exact_figures`), zero when the user has none there."""
    _, per_user = _figures_by_user(decisions, recalibrate)
    mine = per_user.get(user_id)
    if mine is None:
        mine = rules.figures(dict.fromkeys(rules.SUM_FIELDS, 0), recalibrated=recalibrate is not None)
    return {"user_id": user_id, **mine}
