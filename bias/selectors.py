"""Reads for bias detection and subgroup analysis.

SEAM (fixed by the foundation): the fairness app's amplification analysis reads subgroup
statistics only through amplification_counts().

Every figure here is a SUM over the daily statistics rows (SubgroupDailyStat), computed in
SQL, so the cost depends on days x groups x value combinations, never on the number of
decisions.
"""

import datetime as dt
from dataclasses import astuple, dataclass
from fractions import Fraction
from functools import reduce
from operator import or_
from typing import Any

from django.db.models import Count, F, JSONField, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from audit import selectors as audit_selectors
from bias.domain import DEFAULT_FAVORABLE_VALUES, Rate, normalize_value, reference_rate, subgroups_lenient
from bias.models import (
    BiasAlert,
    BiasAlertFinding,
    Correctness,
    ModelFavorableValues,
    SubgroupAttachment,
    SubgroupDailyStat,
)
from bias.stats import correctness
from config.querysets import narrowed
from config.timeutils import iso8601
from keys.models import Customer


@dataclass(frozen=True)
class GroupValueCount:
    group: str  # the subgroup value, e.g. "female"
    ai_value: str  # AI recommendation, trimmed and case-folded
    human_value: str  # final human decision, trimmed and case-folded
    count: int


def amplification_counts(
    *,
    customer: Customer,
    model_id: str,
    model_version: str | None,
    attribute: str,
    since: dt.datetime,
    until: dt.datetime | None = None,
) -> list[GroupValueCount]:
    """Counts of the customer's decisions of `model_id` (and, when model_version is given,
    decisions whose model_version is that version or unset) made at or after `since` (day
    granularity: the whole UTC day containing `since` counts) and before `until` (exact: the
    whole days before its day from the daily statistics, its own day up to it from the
    decisions), whose subgroups carry `attribute` ("gender", "age_group", "ethnicity" or
    "custom.<key>"), grouped by (group, ai_value, human_value). Aggregated in SQL."""
    since_day = (since if since.tzinfo else since.replace(tzinfo=dt.UTC)).astimezone(dt.UTC).date()
    qs = SubgroupDailyStat.objects.filter(
        customer=customer, model_id=model_id or "", attribute=attribute, day__gte=since_day
    )
    if model_version:
        qs = qs.filter(model_version__in=[model_version, ""])
    totals: dict[tuple[str, str, str], int] = {}
    if until is not None:
        until_day = until.astimezone(dt.UTC).date()
        qs = qs.filter(day__lt=until_day)
        if until_day >= since_day:
            edge = _edge_value_counts(
                customer=customer,
                model_id=model_id,
                model_version=model_version,
                attribute=attribute,
                since=_day_start(until_day),
                until=until,
            )
            totals.update(edge)
    rows = qs.values("group_value", "ai_value", "human_value").annotate(total=Sum("count"))
    for r in rows:
        key = (r["group_value"], r["ai_value"], r["human_value"])
        totals[key] = totals.get(key, 0) + int(r["total"])
    return [GroupValueCount(*key, total) for key, total in sorted(totals.items()) if total > 0]


def _edge_value_counts(
    *,
    customer: Customer,
    model_id: str,
    model_version: str | None,
    attribute: str,
    since: dt.datetime,
    until: dt.datetime,
) -> dict[tuple[str, str, str], int]:
    """amplification_counts of the decisions made in [since, until) (a part of one day), read
    from the decisions with the statistics' rules: grouped in SQL by the values and the
    subgroups (and the attachment counted for the decision), each under its counted group."""
    decisions = audit_selectors.decision_set(customer, since=since, until=until, model_ids=[model_id])
    if model_version:
        decisions = decisions.filter(
            Q(model_version=model_version) | Q(model_version="") | Q(model_version__isnull=True)
        )
    attached = SubgroupAttachment.objects.filter(
        customer=customer, decision_id=OuterRef("decision_id"), counted=True
    ).values("attributes")[:1]
    rows = (
        decisions.order_by()
        .annotate(attached=Subquery(attached, output_field=JSONField()))
        .values("ai_recommendation", "user_decision", "subgroups", "attached")
        .annotate(n=Count("id"))
    )
    out: dict[tuple[str, str, str], int] = {}
    for r in rows:
        groups = r["attached"] if r["attached"] is not None else subgroups_lenient(r["subgroups"])
        group = groups.get(attribute)
        if group is not None:
            key = (group, normalize_value(r["ai_recommendation"]), normalize_value(r["user_decision"]))
            out[key] = out.get(key, 0) + int(r["n"])
    return out


# --- favourable values ------------------------------------------------------------------------


def favorable_values(*, customer: Customer, model_id: str | None) -> list[str]:
    """The favourable values in force for one model (normalised)."""
    if model_id:
        row = ModelFavorableValues.objects.filter(customer=customer, model_id=model_id).first()
        if row is not None:
            return sorted({normalize_value(v) for v in row.values or [] if normalize_value(v)})
    return list(DEFAULT_FAVORABLE_VALUES)


def _favorable_configs(*, customer: Customer, model_id: str | None) -> dict[str, list[str]]:
    configs = ModelFavorableValues.objects.filter(customer=customer)
    if model_id is not None:
        configs = configs.filter(model_id=model_id)
    return {
        c.model_id: sorted({normalize_value(v) for v in c.values or [] if normalize_value(v)})
        for c in configs.only("model_id", "values")
    }


def _favorable_q(field: str, configs: dict[str, list[str]]) -> Q:
    """`field` (ai_value or human_value) is favourable for its row's model: the model's
    configured list where there is one, else the default list (docs/reference/bias.md, Favourable values)."""
    default = Q(**{f"{field}__in": DEFAULT_FAVORABLE_VALUES})
    if not configs:
        return default
    branches = []
    for config_model, values in configs.items():
        # An empty list means nothing is favourable; the value columns are NOT NULL.
        match = Q(**{f"{field}__in": values}) if values else Q(**{f"{field}__isnull": True})
        branches.append(Q(model_id=config_model) & match)
    return reduce(or_, branches) | (~Q(model_id__in=list(configs)) & default)


# --- subgroup figures -------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupCounts:
    group: str
    decisions: int
    favorable: int
    ai_favorable: int
    agreements: int
    overtrust: int
    undertrust: int
    confidence_count: int
    confidence_micros: int
    with_outcome: int
    correct: int
    ai_correct: int


def _stats(
    *, customer: Customer, model_id: str | None, from_day: dt.date | None, to_day: dt.date | None
) -> QuerySet:
    qs = SubgroupDailyStat.objects.filter(customer=customer)
    if model_id is not None:
        qs = qs.filter(model_id=model_id)
    if from_day is not None:
        qs = qs.filter(day__gte=from_day)
    if to_day is not None:
        qs = qs.filter(day__lte=to_day)
    return qs


def subgroup_counts(
    *,
    customer: Customer,
    attributes: list[str] | None,
    model_id: str | None,
    from_day: dt.date | None,
    to_day: dt.date | None,
) -> dict[str, list[GroupCounts]]:
    """Per attribute, per group: the counts behind every figure (docs/reference/bias.md), summed in SQL
    over the daily rows of the window (days inclusive). `attributes` None means all present;
    `model_id` None means all models."""
    qs = _stats(customer=customer, model_id=model_id, from_day=from_day, to_day=to_day)
    if attributes is not None:
        qs = qs.filter(attribute__in=attributes)

    configs = _favorable_configs(customer=customer, model_id=model_id)

    def total(condition: Q | None = None):
        return Coalesce(Sum("count", filter=condition), 0)

    rows = (
        qs.values("attribute", "group_value")
        .annotate(
            decisions=total(),
            favorable=total(_favorable_q("human_value", configs)),
            ai_favorable=total(_favorable_q("ai_value", configs)),
            agreements=total(Q(ai_value=F("human_value"))),
            overtrust=total(Q(category="OVERTRUSTING")),
            undertrust=total(Q(category="UNDERTRUSTING")),
            confidence_count_sum=Coalesce(Sum("confidence_count"), 0),
            confidence_micros_sum=Coalesce(Sum("confidence_micros"), 0),
            with_outcome=total(~Q(human_correct=Correctness.UNKNOWN)),
            correct=total(Q(human_correct=Correctness.CORRECT)),
            ai_correct=total(Q(ai_correct=Correctness.CORRECT)),
        )
        .filter(decisions__gt=0)
        .order_by("attribute", "group_value")
    )
    out: dict[str, list[GroupCounts]] = {}
    for r in rows:
        out.setdefault(r["attribute"], []).append(
            GroupCounts(
                group=r["group_value"],
                decisions=int(r["decisions"]),
                favorable=int(r["favorable"]),
                ai_favorable=int(r["ai_favorable"]),
                agreements=int(r["agreements"]),
                overtrust=int(r["overtrust"]),
                undertrust=int(r["undertrust"]),
                confidence_count=int(r["confidence_count_sum"]),
                confidence_micros=int(r["confidence_micros_sum"]),
                with_outcome=int(r["with_outcome"]),
                correct=int(r["correct"]),
                ai_correct=int(r["ai_correct"]),
            )
        )
    return out


def _day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


def exact_subgroup_counts(
    *,
    customer: Customer,
    attributes: list[str] | None,
    model_id: str | None,
    since: dt.datetime,
    until: dt.datetime,
) -> dict[str, list[GroupCounts]]:
    """subgroup_counts over the exact window [since, until) (docs/reference/bias.md, Subgroup
    figures): the whole UTC days inside it from the daily statistics, the partial days at its
    edges from the decisions made in them."""
    first_whole = since.date() if since.time() == dt.time.min else since.date() + dt.timedelta(days=1)
    last_whole = until.date() - dt.timedelta(days=1)
    parts: list[dict[str, list[GroupCounts]]] = []
    edges: list[tuple[dt.datetime, dt.datetime]] = []
    if first_whole <= last_whole:
        parts.append(
            subgroup_counts(
                customer=customer,
                attributes=attributes,
                model_id=model_id,
                from_day=first_whole,
                to_day=last_whole,
            )
        )
        edges = [(since, _day_start(first_whole)), (_day_start(last_whole + dt.timedelta(days=1)), until)]
    else:
        edges = [(since, until)]
    for start, end in edges:
        if start < end:
            parts.append(
                _decision_counts(
                    customer=customer, attributes=attributes, model_id=model_id, since=start, until=end
                )
            )
    totals: dict[str, dict[str, list[int]]] = {}
    for part in parts:
        for attribute, groups in part.items():
            for g in groups:
                row = totals.setdefault(attribute, {}).setdefault(g.group, [0] * 11)
                for i, value in enumerate(astuple(g)[1:]):
                    row[i] += value
    return {
        attribute: [GroupCounts(group, *row) for group, row in sorted(groups.items()) if row[0] > 0]
        for attribute, groups in sorted(totals.items())
    }


def _decision_counts(
    *,
    customer: Customer,
    attributes: list[str] | None,
    model_id: str | None,
    since: dt.datetime,
    until: dt.datetime,
) -> dict[str, list[GroupCounts]]:
    """subgroup_counts computed from the decisions made in [since, until) instead of the daily
    statistics, with exactly the statistics' rules (bias.stats): the decisions are grouped in
    SQL by the columns a decision's statistics row is derived from (values, outcome, category,
    model, subgroups and the attachment counted for it), and each distinct combination is
    counted once under the attributes it counts under."""
    decisions = audit_selectors.decision_set(
        customer, since=since, until=until, model_ids=[model_id] if model_id is not None else None
    )
    attached = SubgroupAttachment.objects.filter(
        customer=customer, decision_id=OuterRef("decision_id"), counted=True
    ).values("attributes")[:1]
    rows = (
        decisions.order_by()
        .annotate(attached=Subquery(attached, output_field=JSONField()))
        .values(
            "ai_recommendation",
            "user_decision",
            "outcome",
            "calibration_category",
            "model_id",
            "subgroups",
            "attached",
        )
        .annotate(n=Count("id"), confidence_n=Count("ai_confidence"), confidence_sum=Sum("ai_confidence"))
    )
    configs = _favorable_configs(customer=customer, model_id=model_id)
    wanted = set(attributes) if attributes is not None else None
    totals: dict[str, dict[str, list[int]]] = {}
    for r in rows:
        groups = r["attached"] if r["attached"] is not None else subgroups_lenient(r["subgroups"])
        ai_value, human_value = normalize_value(r["ai_recommendation"]), normalize_value(r["user_decision"])
        favorable = configs.get(r["model_id"] or "", DEFAULT_FAVORABLE_VALUES)
        human_correct = correctness(human_value, r["outcome"])
        ai_correct = correctness(ai_value, r["outcome"])
        category = r["calibration_category"] or "CALIBRATED"
        n = int(r["n"])
        counts = [
            n,
            n * (human_value in favorable),
            n * (ai_value in favorable),
            n * (ai_value == human_value),
            n * (category == "OVERTRUSTING"),
            n * (category == "UNDERTRUSTING"),
            int(r["confidence_n"]),
            round(float(r["confidence_sum"] or 0) * 1_000_000),
            n * (human_correct != Correctness.UNKNOWN),
            n * (human_correct == Correctness.CORRECT),
            n * (ai_correct == Correctness.CORRECT),
        ]
        for attribute, group in groups.items():
            if wanted is not None and attribute not in wanted:
                continue
            row = totals.setdefault(attribute, {}).setdefault(group, [0] * 11)
            for i, value in enumerate(counts):
                row[i] += value
    return {
        attribute: [GroupCounts(group, *row) for group, row in sorted(groups.items())]
        for attribute, groups in totals.items()
    }


def _ratio(x: int, n: int) -> float | None:
    return round(x / n, 6) if n else None


def subgroup_report(
    *,
    customer: Customer,
    attribute: str | None,
    model_id: str | None,
    from_day: dt.date,
    to_day: dt.date,
    exact: tuple[dt.datetime, dt.datetime] | None = None,
) -> dict[str, Any]:
    """GET /bias/subgroups (docs/reference/bias.md, Subgroup figures): per attribute and group the figures,
    and the disparity of each group against the reference group (the largest; ties by name).
    With `exact` (a bound inside a day) the window is exactly [start, end)."""
    wanted = [attribute] if attribute else None
    if exact is not None:
        counts = exact_subgroup_counts(
            customer=customer, attributes=wanted, model_id=model_id, since=exact[0], until=exact[1]
        )
    else:
        counts = subgroup_counts(
            customer=customer, attributes=wanted, model_id=model_id, from_day=from_day, to_day=to_day
        )
    attributes: dict[str, Any] = {}
    for name, groups in counts.items():
        reference = min(groups, key=lambda g: (-g.decisions, g.group))
        ref_fav = reference.favorable / reference.decisions
        # The four-fifths rule's yardstick: the highest favourable rate (of the groups of 30 or more).
        highest = reference_rate(
            [Rate(g.group, g.favorable, g.decisions) for g in groups], higher_is_better=True
        )
        ref_override = (reference.decisions - reference.agreements) / reference.decisions
        entries = []
        for g in sorted(groups, key=lambda g: (-g.decisions, g.group)):
            fav = g.favorable / g.decisions
            override = (g.decisions - g.agreements) / g.decisions
            entries.append(
                {
                    "group": g.group,
                    "decisions": g.decisions,
                    "favorable_rate": _ratio(g.favorable, g.decisions),
                    "ai_favorable_rate": _ratio(g.ai_favorable, g.decisions),
                    "agreement_rate": _ratio(g.agreements, g.decisions),
                    "override_rate": _ratio(g.decisions - g.agreements, g.decisions),
                    "overtrust_rate": _ratio(g.overtrust, g.decisions),
                    "undertrust_rate": _ratio(g.undertrust, g.decisions),
                    "mean_ai_confidence": (
                        round(g.confidence_micros / 1_000_000 / g.confidence_count, 6)
                        if g.confidence_count
                        else None
                    ),
                    "decisions_with_outcome": g.with_outcome,
                    "accuracy": _ratio(g.correct, g.with_outcome),
                    "ai_accuracy": _ratio(g.ai_correct, g.with_outcome),
                    "impact_ratio": round(float(Fraction(g.favorable, g.decisions) / highest.value), 6)
                    if highest.x
                    else None,
                    "disparity": {
                        "favorable_rate_difference": round(fav - ref_fav, 6),
                        "disparate_impact_ratio": round(fav / ref_fav, 6) if ref_fav else None,
                        "override_rate_difference": round(override - ref_override, 6),
                    },
                }
            )
        attributes[name] = {
            "reference_group": reference.group,
            "impact_reference_group": highest.group,
            "groups": entries,
        }
    if exact is not None:
        return {
            "model_id": model_id,
            "from": iso8601(exact[0]),
            "to": iso8601(exact[1]),
            "attributes": attributes,
        }
    return {
        "model_id": model_id,
        "from": from_day.isoformat(),
        "to": to_day.isoformat(),
        "attributes": attributes,
    }


# --- bias alerts ------------------------------------------------------------------------------


def bias_alerts_with_finding(
    rows: QuerySet[BiasAlert], *, attribute: str | None = None, bias_type: str | None = None
) -> QuerySet[BiasAlert]:
    """The alerts with a finding on `attribute` and of `bias_type` (the same finding when both
    are given); either None does not narrow."""
    if not (attribute or bias_type):
        return rows
    findings = narrowed(BiasAlertFinding.objects.all(), attribute=attribute, bias_type=bias_type)
    return rows.filter(pk__in=findings.values("alert_id"))


def bias_alert_list(rows: QuerySet[BiasAlert]) -> QuerySet[BiasAlert]:
    """The bias alerts of a tenant-filtered (and list-filtered) queryset, newest first."""
    return rows.order_by("-created_at", "-id")


def bias_alerts_for_report(
    *, customer: Customer, since: dt.datetime, until: dt.datetime, model_ids: list[str] | None = None
) -> QuerySet[BiasAlert]:
    """The bias alerts raised in [since, until), newest first (a compliance report's period)."""
    qs = BiasAlert.objects.filter(customer=customer, created_at__gte=since, created_at__lt=until)
    return narrowed(qs, model_id__in=model_ids).order_by("-created_at", "-id")
