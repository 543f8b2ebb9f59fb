"""The per-group counts of an exact window [since, until) (docs/reference/bias.md, Subgroup
figures): the whole UTC days inside it from the daily statistics, the partial days at its edges
from the decisions made in them, grouped in SQL by the columns their statistics rows derive
from and counted by the statistics' rules (bias.stats).
"""

import datetime as dt
from collections.abc import Mapping
from dataclasses import astuple
from typing import Any

from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    F,
    FloatField,
    JSONField,
    OuterRef,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.expressions import Combinable
from django.db.models.functions import Cast, Round

from audit import selectors as audit_selectors
from bias.domain import DEFAULT_FAVORABLE_VALUES, normalize_value, subgroups_lenient
from bias.models import Correctness, SubgroupAttachment
from bias.stats import PICO, correctness, stake_weights
from bias.subgroup_counts import GROUP_SUMS, GroupCounts, day_start, favorable_configs, subgroup_counts
from keys.models import Customer


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
        edges = [(since, day_start(first_whole)), (day_start(last_whole + dt.timedelta(days=1)), until)]
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
                row = totals.setdefault(attribute, {}).setdefault(g.group, [0] * GROUP_SUMS)
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
        .annotate(
            n=Count("id"),
            confidence_n=Count("ai_confidence"),
            confidence_sum=Sum("ai_confidence"),
            **_CONFIDENCE_WEIGHTS,
        )
    )
    configs = favorable_configs(customer=customer, model_id=model_id)
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
            int(r["confidence_n"]) * (category == "OVERTRUSTING"),  # incidents need a confidence
            int(r["confidence_n"]) * (category == "UNDERTRUSTING"),
            int(r["confidence_n"]),
            round(float(r["confidence_sum"] or 0) * 1_000_000),
            n * (human_correct != Correctness.UNKNOWN),
            n * (human_correct == Correctness.CORRECT),
            n * (ai_correct == Correctness.CORRECT),
            *_edge_weights(r, ai_correct, followed=ai_value == human_value),
        ]
        for attribute, group in groups.items():
            if wanted is not None and attribute not in wanted:
                continue
            row = totals.setdefault(attribute, {}).setdefault(group, [0] * GROUP_SUMS)
            for i, value in enumerate(counts):
                row[i] += value
    return {
        attribute: [GroupCounts(group, *row) for group, row in sorted(groups.items())]
        for attribute, groups in totals.items()
    }


def _pico(expression: Combinable) -> Sum:
    """A weight of one decision in PICO units, rounded in SQL as bias.stats rounds it in Python
    (PostgreSQL rounds half to even as Python does; SQLite half away from zero, which differs
    only on an exact tie)."""
    return Sum(Cast(Round(expression * Value(float(PICO))), BigIntegerField()))


_W_O = Value(1.0) - Value(2.0) * F("ai_confidence")
_W_U = Value(2.0) * F("ai_confidence") - Value(1.0)
# The stake weights of the decisions that have a confidence (bias.stats.stake_weights).
_CONFIDENCE_WEIGHTS = {
    "wo_c": _pico(
        Case(When(ai_confidence__lt=0.5, then=_W_O), default=Value(0.0), output_field=FloatField())
    ),
    "wo_sq_c": _pico(
        Case(When(ai_confidence__lt=0.5, then=_W_O * _W_O), default=Value(0.0), output_field=FloatField())
    ),
    "wu_c": _pico(
        Case(When(ai_confidence__gt=0.5, then=_W_U), default=Value(0.0), output_field=FloatField())
    ),
    "wu_sq_c": _pico(
        Case(When(ai_confidence__gt=0.5, then=_W_U * _W_U), default=Value(0.0), output_field=FloatField())
    ),
}


# Any: a grouped row of .values() by column name
def _edge_weights(r: Mapping[str, Any], ai_correct: int, *, followed: bool) -> list[int]:
    """The GroupCounts weight sums of one grouped row of decisions: scored, w_o, w_o^2, f*w_o,
    w_u, w_u^2, (1 - f)*w_u. Those with a confidence come summed from SQL; those without weigh
    nothing (an outcome alone scores them but gives no stake weight)."""
    without = int(r["n"]) - int(r["confidence_n"])
    wo, wo_sq, wu, wu_sq = (without * w for w in stake_weights(None, ai_correct))
    wo += int(r["wo_c"] or 0)
    wo_sq += int(r["wo_sq_c"] or 0)
    wu += int(r["wu_c"] or 0)
    wu_sq += int(r["wu_sq_c"] or 0)
    scored = int(r["n"]) if ai_correct != Correctness.UNKNOWN else int(r["confidence_n"])
    return [scored, wo, wo_sq, wo * followed, wu, wu_sq, wu * (not followed)]
