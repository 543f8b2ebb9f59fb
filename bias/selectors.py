"""Reads for bias detection and subgroup analysis.

SEAM (fixed by the foundation): the fairness app's amplification analysis reads subgroup
statistics only through amplification_counts().

Every figure here is a SUM over the daily statistics rows (SubgroupDailyStat), computed in
SQL, so the cost depends on days x groups x value combinations, never on the number of
decisions. The subgroup figures (GET /bias/subgroups) live in bias.subgroup_figures and are
offered here, the module other apps read.
"""

import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, JSONField, OuterRef, Q, QuerySet, Subquery, Sum

from audit import selectors as audit_selectors
from bias.domain import DEFAULT_FAVORABLE_VALUES, normalize_value, subgroups_lenient
from bias.models import BiasAlert as BiasAlert  # re-exported: the reports read it
from bias.models import (
    BiasAlertFinding,
    ModelFavorableValues,
    SubgroupAttachment,
    SubgroupDailyStat,
)
from bias.subgroup_counts import day_start
from bias.subgroup_figures import AttributeFigures as AttributeFigures
from bias.subgroup_figures import SubgroupReport as SubgroupReport
from bias.subgroup_figures import subgroup_report as subgroup_report
from config.querysets import narrowed
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
                since=day_start(until_day),
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
