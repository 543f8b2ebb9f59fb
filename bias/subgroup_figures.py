"""GET /bias/subgroups (docs/reference/bias.md, Subgroup figures): every group's figures from its
counts (bias.subgroup_counts, or bias.subgroup_exact for a bound inside a day).
"""

import datetime as dt
from fractions import Fraction

from audit import measures
from bias.domain import Rate, reference_rate
from bias.stats import PICO
from bias.subgroup_counts import GroupCounts, subgroup_counts
from bias.subgroup_exact import exact_subgroup_counts
from config.jsondoc import JSONObject
from config.timeutils import iso8601
from keys.models import Customer


# figures by name (counts, rates, intervals, labels), rendered as JSON
def _stake_figures(g: GroupCounts) -> JSONObject:
    """A group's scored decisions and its stake-weighted rates (docs/reference/bias.md, Over- and
    under-trust of a group): the per-user formulas of docs/reference/calibration.md over the
    group's decisions, Kish's effective n (the statistics keep no reviewer, so no clusters)."""
    out: JSONObject = {
        "scored_decisions": g.scored,
        "unscored_decisions": g.decisions - g.scored,
        "coverage": g.scored / g.decisions if g.decisions else None,
        "automation_bias_incidents": g.overtrust,
    }
    for name, num, den, sq in (("overtrust", g.fwo, g.wo, g.wo_sq), ("undertrust", g.uwu, g.wu, g.wu_sq)):
        rate, n_eff, ci = measures.weighted_rate(num / PICO, den / PICO, sq / PICO)
        out[f"{name}_rate"] = rate
        out[f"{name}_effective_n"] = n_eff
        out[f"{name}_rate_ci"] = ci
    return out


def _ratio(x: int, n: int) -> float | None:
    return round(x / n, 6) if n else None


# figures by name (counts, rates, intervals, labels), rendered as JSON
def subgroup_report(
    *,
    customer: Customer,
    attribute: str | None,
    model_id: str | None,
    from_day: dt.date,
    to_day: dt.date,
    exact: tuple[dt.datetime, dt.datetime] | None = None,
) -> JSONObject:
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
    attributes: JSONObject = {}
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
