"""GET /bias/subgroups (docs/reference/bias.md, Subgroup figures): every group's figures from its
counts (bias.subgroup_counts, or bias.subgroup_exact for a bound inside a day).
"""

import datetime as dt
from fractions import Fraction
from typing import TypedDict

from audit import measures
from audit.measures_stats import trust_rates
from bias.domain import Rate, reference_rate
from bias.stats import PICO
from bias.subgroup_counts import GroupCounts, subgroup_counts
from bias.subgroup_exact import exact_subgroup_counts
from config.timeutils import iso8601
from keys.models import Customer


class StakeFigures(measures.TrustRates):
    """A group's scored decisions and stake-weighted rates (docs/reference/bias.md, Over- and
    under-trust of a group)."""

    scored_decisions: int
    unscored_decisions: int
    coverage: float | None
    automation_bias_incidents: int


class Disparity(TypedDict):
    """A group against its attribute's reference group."""

    favorable_rate_difference: float
    disparate_impact_ratio: float | None
    override_rate_difference: float


class GroupFigures(StakeFigures):
    """A group's figures (docs/reference/bias.md, Subgroup figures): the API's, the reports' and
    the console's."""

    group: str
    decisions: int
    favorable_rate: float | None
    ai_favorable_rate: float | None
    agreement_rate: float | None
    override_rate: float | None
    mean_ai_confidence: float | None
    decisions_with_outcome: int
    accuracy: float | None
    ai_accuracy: float | None
    impact_ratio: float | None
    disparity: Disparity


class AttributeFigures(TypedDict):
    reference_group: str  # the largest group (ties by name)
    impact_reference_group: str  # the four-fifths rule's yardstick: the highest favourable rate
    groups: list[GroupFigures]


# GET /bias/subgroups's document ("from" is a keyword: the functional form)
SubgroupReport = TypedDict(
    "SubgroupReport",
    {"model_id": str | None, "from": str, "to": str, "attributes": dict[str, AttributeFigures]},
)


def _stake_figures(g: GroupCounts) -> StakeFigures:
    """A group's scored decisions and its stake-weighted rates (docs/reference/bias.md, Over- and
    under-trust of a group): the per-user formulas of docs/reference/calibration.md over the
    group's decisions, Kish's effective n (the statistics keep no reviewer, so no clusters)."""
    over = measures.Rate(*measures.weighted_rate(g.fwo / PICO, g.wo / PICO, g.wo_sq / PICO))
    under = measures.Rate(*measures.weighted_rate(g.uwu / PICO, g.wu / PICO, g.wu_sq / PICO))
    return {
        "scored_decisions": g.scored,
        "unscored_decisions": g.decisions - g.scored,
        "coverage": g.scored / g.decisions if g.decisions else None,
        "automation_bias_incidents": g.overtrust,
        **trust_rates(over, under),
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
) -> SubgroupReport:
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
    attributes: dict[str, AttributeFigures] = {}
    for name, groups in counts.items():
        reference = min(groups, key=lambda g: (-g.decisions, g.group))
        ref_fav = reference.favorable / reference.decisions
        # The four-fifths rule's yardstick: the highest favourable rate (of the groups of 30 or more).
        highest = reference_rate(
            [Rate(g.group, g.favorable, g.decisions) for g in groups], higher_is_better=True
        )
        ref_override = (reference.decisions - reference.agreements) / reference.decisions
        entries: list[GroupFigures] = []
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
                    **_stake_figures(g),
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
