"""The per-group counts of the daily subgroup statistics: what bias detection analyses and what
GET /bias/subgroups reports (bias.subgroup_figures).

Every count is a SUM over the daily statistics rows (SubgroupDailyStat) computed in SQL, one
GROUP BY per attribute and group, so the cost depends on days x groups x value combinations,
never on the number of decisions.
"""

import datetime as dt
from dataclasses import dataclass, fields
from functools import reduce
from operator import or_

from django.db.models import F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from bias.domain import DEFAULT_FAVORABLE_VALUES, normalize_value
from bias.models import Correctness, ModelFavorableValues, SubgroupDailyStat
from keys.models import Customer


def day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


def favorable_configs(*, customer: Customer, model_id: str | None) -> dict[str, list[str]]:
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
    # The stake-weighted rates' sums (docs/architecture.md, Subgroup statistics), in PICO units:
    # w_o, w_o^2, f*w_o, w_u, w_u^2, (1 - f)*w_u over the scored decisions.
    scored: int = 0
    wo: int = 0
    wo_sq: int = 0
    fwo: int = 0
    wu: int = 0
    wu_sq: int = 0
    uwu: int = 0


GROUP_SUMS = len(fields(GroupCounts)) - 1  # every field but the group


def _stats(
    *, customer: Customer, model_id: str | None, from_day: dt.date | None, to_day: dt.date | None
) -> QuerySet[SubgroupDailyStat]:
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

    configs = favorable_configs(customer=customer, model_id=model_id)

    def total(condition: Q | None = None) -> Coalesce:
        return Coalesce(Sum("count", filter=condition), 0)

    rows = (
        qs.values("attribute", "group_value")
        .annotate(
            # Scored: an outcome is known (the row says so), else a confidence is present. These
            # come first: the `ai_correct` annotation below hides the column of that name.
            scored=total(~Q(ai_correct=Correctness.UNKNOWN))
            + Coalesce(Sum("confidence_count", filter=Q(ai_correct=Correctness.UNKNOWN)), 0),
            wo=Coalesce(Sum("wo_pico"), 0),
            wo_sq=Coalesce(Sum("wo_sq_pico"), 0),
            fwo=Coalesce(Sum("wo_pico", filter=Q(ai_value=F("human_value"))), 0),
            wu=Coalesce(Sum("wu_pico"), 0),
            wu_sq=Coalesce(Sum("wu_sq_pico"), 0),
            uwu=Coalesce(Sum("wu_pico", filter=~Q(ai_value=F("human_value"))), 0),
            decisions=total(),
            favorable=total(_favorable_q("human_value", configs)),
            ai_favorable=total(_favorable_q("ai_value", configs)),
            agreements=total(Q(ai_value=F("human_value"))),
            # Incidents need a confidence (docs/reference/calibration.md, Notation): the decisions
            # of a row that have one.
            overtrust=Coalesce(Sum("confidence_count", filter=Q(category="OVERTRUSTING")), 0),
            undertrust=Coalesce(Sum("confidence_count", filter=Q(category="UNDERTRUSTING")), 0),
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
                scored=int(r["scored"]),
                wo=int(r["wo"]),
                wo_sq=int(r["wo_sq"]),
                fwo=int(r["fwo"]),
                wu=int(r["wu"]),
                wu_sq=int(r["wu_sq"]),
                uwu=int(r["uwu"]),
            )
        )
    return out
