"""The calibration figures (docs/reference/calibration.md) over any set of decisions (a compliance report's
filtered decisions), aggregated in SQL.

The decisions are grouped by what the figures depend on (user, followed, category, whether
the outcome is known, confidence bin); each group becomes the columns of the daily
aggregate (rules.SUM_FIELDS) through rules.contribution itself, applied once per group and
scaled by its size, so the figures are the API's to the digit. With a known outcome, "the AI
was right" follows from the stored `followed_ai` and category (followed and wrong is
OVERTRUSTING, overrode and right is UNDERTRUSTING: docs/reference/calibration.md, Category of a
decision). Only the appropriate-reliance counts
(switch, RAIR, RSR) compare decision strings; they are grouped by the distinct value
combinations of the decisions that have both an initial decision and an outcome."""

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from django.db.models import Case, Count, IntegerField, Q, QuerySet, Sum, Value, When
from django.db.models.functions import TruncDate, TruncMonth, TruncWeek

from calibration import rules
from calibration.selectors import DayRange, periods, weighted_user_means

RELIANCE_FIELDS = ["sw_den", "sw_num", "rair_den", "rair_num", "rsr_den", "rsr_num"]
_BIN_EDGES = [(b + 1) / rules.BIN_COUNT for b in range(rules.BIN_COUNT - 1)]
_TRUNC = {"day": TruncDate, "week": TruncWeek, "month": TruncMonth}


def _bin_expr() -> Case:
    """rules.confidence_bin in SQL: five bins, 1.0 in the last; NULL without a confidence."""
    whens = [When(ai_confidence__isnull=True, then=Value(None))]
    whens += [When(ai_confidence__lt=edge, then=Value(b)) for b, edge in enumerate(_BIN_EDGES)]
    return Case(*whens, default=Value(rules.BIN_COUNT - 1), output_field=IntegerField())


def _grouped(decisions: QuerySet, *keys: str) -> QuerySet:
    return (
        decisions.order_by()
        .annotate(
            conf_bin=_bin_expr(), has_outcome=Case(When(outcome__isnull=True, then=Value(0)), default=1)
        )
        .values(*keys, "followed_ai", "calibration_category", "has_outcome", "conf_bin")
        .annotate(g_n=Count("pk"), g_conf_n=Count("ai_confidence"), g_conf_sum=Sum("ai_confidence"))
    )


def _ai_right(followed: bool, category: str) -> bool:
    """With a known outcome, whether the AI was right, from the stored flag and category
    (docs/reference/calibration.md: followed and wrong is OVERTRUSTING, overrode and right is
    UNDERTRUSTING)."""
    return (followed and category != rules.OVERTRUSTING) or (not followed and category == rules.UNDERTRUSTING)


def _group_sums(row: Mapping[str, Any]) -> dict[str, float]:
    """One group's aggregate columns: the contribution of a representative record, times n,
    with the confidence sums of the group's own rows."""
    n = row["g_n"]
    followed = bool(row["followed_ai"])
    category = row["calibration_category"]
    ai_right = _ai_right(followed, category)
    b = row["conf_bin"]
    record = rules.Record(
        ai_recommendation="ai",
        user_decision="ai" if followed else "other",
        confidence=None if b is None else (b + 0.5) / rules.BIN_COUNT,
        outcome=("ai" if ai_right else "other") if row["has_outcome"] else None,
        initial_decision=None,
        category=category,
    )
    sums = {name: value * n for name, value in rules.contribution(record).items()}
    conf_sum = float(row["g_conf_sum"] or 0.0)
    if b is not None:
        sums["conf_n"] = row["g_conf_n"]
        sums["conf_sum"] = conf_sum
        if not row["has_outcome"]:
            sums[f"b{b}_conf"] = conf_sum
            sums["gap_sum"] = n * int(followed) - conf_sum
    return sums


def _reliance_sums(decisions: QuerySet, *keys: str) -> dict[tuple, dict[str, float]]:
    """Switch, RAIR and RSR counts per key, over the distinct value combinations."""
    rows = (
        decisions.order_by()
        .filter(initial_decision__isnull=False, outcome__isnull=False)
        .values(*keys, "ai_recommendation", "user_decision", "initial_decision", "outcome")
        .annotate(g_n=Count("pk"))
    )
    out: dict[tuple, dict[str, float]] = defaultdict(lambda: dict.fromkeys(RELIANCE_FIELDS, 0))
    for row in rows:
        record = rules.Record(
            ai_recommendation=row["ai_recommendation"],
            user_decision=row["user_decision"],
            confidence=None,
            outcome=row["outcome"],
            initial_decision=row["initial_decision"],
            category=rules.CALIBRATED,
        )
        target = out[tuple(row[k] for k in keys)]
        for name, value in rules.contribution(record).items():
            if name in target:
                target[name] += value * row["g_n"]
    return out


def _add(into: dict[str, float], sums: Mapping[str, float]) -> None:
    for name, value in sums.items():
        into[name] = into.get(name, 0) + value


def _complete(sums: Mapping[str, float]) -> dict[str, float]:
    return {name: sums.get(name, 0) for name in rules.SUM_FIELDS}


def user_figures(decisions: QuerySet) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the organisation's figures, one row per user worst trust score first) over `decisions`, by
    docs/reference/calibration.md, Organisation figures: rates over all decisions, trust score and gap
    weighted by scored decisions."""
    per_user: dict[str, dict[str, float]] = defaultdict(dict)
    for row in _grouped(decisions, "user_id"):
        _add(per_user[row["user_id"]], _group_sums(row))
    for (user_id,), reliance in _reliance_sums(decisions, "user_id").items():
        _add(per_user[user_id], reliance)
    total: dict[str, float] = {}
    weighted = 0.0
    users = []
    for user_id, raw in per_user.items():
        sums = _complete(raw)
        _add(total, sums)
        weighted += rules.trust_numerator(sums) if rules.scored(sums) else 0.0
        users.append({"user_id": user_id, **rules.figures(sums)})
    users.sort(key=lambda u: (u["trust_score"] is None, u["trust_score"] or 0.0, u["user_id"]))
    sums = _complete(total)
    organisation = weighted_user_means(sums, weighted, rules.scored(sums))
    organisation["counts"] = {
        "followed": int(sums["followed"]),
        "overridden": int(sums["n"] - sums["followed"]),
        "overtrust": int(sums["overtrust"]),
        "undertrust": int(sums["undertrust"]),
        "with_confidence": int(sums["conf_n"]),
        "with_outcome": int(sums["outcome_n"]),
        "with_initial_decision": decisions.order_by().filter(initial_decision__isnull=False).count(),
    }
    return organisation, users


def confidence_bands(decisions: QuerySet) -> list[dict[str, Any]]:
    """Agreement by AI confidence band (the five bins of docs/reference/calibration.md, Trust score): how
    often reviewers followed the AI at each confidence, against how often the AI was right where the
    outcome is known."""
    bands: dict[int, dict[str, float]] = {b: {} for b in range(rules.BIN_COUNT)}
    for row in _grouped(decisions):
        if row["conf_bin"] is None:
            continue
        n = row["g_n"]
        followed = bool(row["followed_ai"])
        category = row["calibration_category"]
        band = bands[row["conf_bin"]]
        _add(band, {"n": n, "followed": n if followed else 0, "conf_sum": float(row["g_conf_sum"] or 0)})
        if row["has_outcome"]:
            _add(band, {"outcome_n": n, "ai_right_n": n if _ai_right(followed, category) else 0})
        if category == rules.OVERTRUSTING:
            _add(band, {"overtrust": n})
    out = []
    for b in range(rules.BIN_COUNT):
        band = bands[b]
        n = band.get("n", 0)
        outcomes = band.get("outcome_n", 0)
        out.append(
            {
                "band": f"{b / rules.BIN_COUNT:.1f}-{(b + 1) / rules.BIN_COUNT:.1f}",
                "decisions": int(n),
                "agreement_rate": rules.r6(band.get("followed", 0) / n) if n else None,
                "mean_ai_confidence": rules.r6(band.get("conf_sum", 0) / n) if n else None,
                "outcomes_known": int(outcomes),
                "ai_accuracy": rules.r6(band.get("ai_right_n", 0) / outcomes) if outcomes else None,
                "overtrust_count": int(band.get("overtrust", 0)),
            }
        )
    return out


def trend_interval(start: dt.date, end: dt.date) -> str:
    """Daily points up to two months, weekly up to a year, monthly beyond."""
    days = (end - start).days + 1
    return "day" if days <= 62 else "week" if days <= 366 else "month"


def trust_trend(
    decisions: QuerySet, *, start: dt.date, end: dt.date, interval: str | None = None
) -> dict[str, Any]:
    """The trust-score trend over the days [start, end] with the per-period rule of
    docs/reference/calibration.md, GET /trust-score/trend (users' figures weighted by their scored
    decisions), zero-filled, in `interval` or the one that suits the period's length."""
    interval = interval or trend_interval(start, end)
    trunc = _TRUNC[interval]("timestamp", tzinfo=dt.UTC)
    by_period: dict[dt.date, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for row in _grouped(decisions.annotate(period=trunc), "period", "user_id"):
        key = row["period"].date() if isinstance(row["period"], dt.datetime) else row["period"]
        _add(by_period[key][row["user_id"]], _group_sums(row))
    points = []
    for period in periods(DayRange(start, end), interval):
        users = by_period.get(period, {})
        total: dict[str, float] = {}
        weighted = 0.0
        for raw in users.values():
            sums = _complete(raw)
            _add(total, sums)
            weighted += rules.trust_numerator(sums) if rules.scored(sums) else 0.0
        sums = _complete(total)
        figures = weighted_user_means(sums, weighted, rules.scored(sums))
        points.append(
            {
                "period_start": period.isoformat(),
                "decisions": figures["decisions"],
                "trust_score": figures["trust_score"] if figures["decisions"] else None,
                "agreement_rate": figures["agreement_rate"],
                "overtrust_count": int(sums["overtrust"]),
                "undertrust_count": int(sums["undertrust"]),
            }
        )
    series = [(i, p["trust_score"]) for i, p in enumerate(points) if p["trust_score"] is not None]
    slope = rules.least_squares_slope(series)
    return {
        "interval": interval,
        "points": points,
        "trend": {"direction": rules.trend_direction(slope), "slope": round(slope, 6)},
    }


def category_counts(decisions: QuerySet) -> dict[str, int]:
    """Decisions per record category, and `total` (one GROUP BY)."""
    rows = decisions.order_by().values("calibration_category").annotate(n=Count("pk"))
    counts = dict.fromkeys(rules.RECORD_CATEGORIES, 0)
    counts.update({row["calibration_category"]: row["n"] for row in rows})
    counts["total"] = sum(counts.values())
    return counts


def models_seen(decisions: QuerySet) -> list[dict[str, Any]]:
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
            "agreement_rate": rules.r6(row["followed"] / row["decisions"]),
        }
        for row in rows
    ]


def exact_figures(decisions: QuerySet, *, user_id: str | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """POST /trust-score over decisions selected by exact timestamps (a bound inside a day, which the daily
    aggregates cannot honour): (the user's or the organisation's figures, the risk users of
    docs/reference/calibration.md, Risk users). Grouped in SQL over the decisions in the window."""
    organisation, users = user_figures(decisions)
    if user_id is not None:
        empty = rules.figures(dict.fromkeys(rules.SUM_FIELDS, 0))
        return next((u for u in users if u["user_id"] == user_id), {"user_id": user_id, **empty}), []
    at_risk = [
        {
            key: u[key]
            for key in (
                "user_id",
                "trust_score",
                "decisions",
                "category",
                "overtrust_rate",
                "undertrust_rate",
            )
        }
        for u in users
        if rules.is_risk_user(u)
    ]
    return organisation, at_risk
