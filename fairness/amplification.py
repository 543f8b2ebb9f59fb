"""The amplification figure (docs/reference/fairness.md, Amplification analysis), as pure functions over
aggregated counts.

Input is what the bias app's statistics store answers: counts of decisions per
(group, AI value, human value). Rates are exact fractions of those integer counts, so the
published figures do not depend on float rounding (0.6 - 0.4 is exactly 0.2 here)."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from bias.domain import DEFAULT_FAVORABLE_VALUES as BIAS_DEFAULT_FAVORABLE_VALUES
from bias.domain import normalize_value
from config.jsondoc import JSONObject

if TYPE_CHECKING:  # the rows bias' selector gives (this module is free of Django)
    from bias.selectors import GroupValueCount

MIN_GROUP_DECISIONS = 30
# The default favourable values (docs/reference/bias.md), owned by the bias app (one source of truth).
DEFAULT_FAVORABLE_VALUES = frozenset(BIAS_DEFAULT_FAVORABLE_VALUES)
# (lower bound, level) from the top: docs/reference/fairness.md, Risk levels.
RISK_BANDS = [
    (Fraction(3, 4), "critical"),
    (Fraction(1, 2), "high"),
    (Fraction(1, 4), "medium"),
    (Fraction(1, 10), "low"),
]
RISK_LEVELS = ["none", "low", "medium", "high", "critical"]


def attribute_key(protected_attribute: str) -> str:
    """protectedAttribute -> the subgroup attribute name of the statistics store."""
    name = protected_attribute.strip()
    if name in ("gender", "age_group", "ethnicity") or name.startswith("custom."):
        return name
    return f"custom.{name}"


def risk_level(score: float | Fraction) -> str:
    for bound, level in RISK_BANDS:
        if score >= bound:
            return level
    return "none"


@dataclass
class GroupCounts:
    name: str
    decisions: int = 0
    ai: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    human: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def ai_rate(self, value: str) -> Fraction:
        return Fraction(self.ai.get(value, 0), self.decisions) if self.decisions else Fraction(0)

    def human_rate(self, value: str) -> Fraction:
        return Fraction(self.human.get(value, 0), self.decisions) if self.decisions else Fraction(0)

    def ai_favorable_rate(self, favorable: frozenset[str]) -> Fraction:
        return sum((self.ai_rate(v) for v in self.ai if v in favorable), Fraction(0))


def group_counts(rows: Iterable["GroupValueCount"]) -> dict[str, GroupCounts]:
    """Fold (group, ai_value, human_value, count) rows into per-group counts."""
    groups: dict[str, GroupCounts] = {}
    for row in rows:
        if row.count <= 0:
            continue
        group = groups.setdefault(row.group, GroupCounts(row.group))
        group.decisions += row.count
        group.ai[normalize_value(row.ai_value)] += row.count
        group.human[normalize_value(row.human_value)] += row.count
    return groups


def _find(groups: dict[str, GroupCounts], name: str) -> GroupCounts:
    if name in groups:
        return groups[name]
    folded = normalize_value(name)
    for key, group in groups.items():
        if normalize_value(key) == folded:
            return group
    return GroupCounts(name)


def choose_groups(
    groups: dict[str, GroupCounts],
    *,
    privileged: str | None,
    unprivileged: str | None,
    favorable: frozenset[str],
) -> tuple[GroupCounts | None, GroupCounts | None]:
    """Step 2: the given groups; else the two largest, privileged = the AI's favourite.
    With one name given, the other is the largest remaining group."""
    if privileged and unprivileged:
        return _find(groups, privileged), _find(groups, unprivileged)
    by_size = sorted(groups.values(), key=lambda g: (-g.decisions, g.name))
    if privileged or unprivileged:
        given = _find(groups, privileged or unprivileged or "")
        others = [g for g in by_size if g.name != given.name]
        other = others[0] if others else None
        return (given, other) if privileged else (other, given)
    if len(by_size) < 2:
        return (by_size[0] if by_size else None), None
    first, second = by_size[0], by_size[1]
    if second.ai_favorable_rate(favorable) > first.ai_favorable_rate(favorable):
        return second, first
    return first, second


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


def _r4(x: Fraction) -> float:
    return float(round(x, 4))


def _group_json(group: GroupCounts | None, values: list[str], fallback_name: str | None) -> JSONObject:
    if group is None:
        return {"name": fallback_name, "decisions": 0, "aiRates": {}, "humanRates": {}}
    return {
        "name": group.name,
        "decisions": group.decisions,
        "aiRates": {v: _r4(group.ai_rate(v)) for v in values},
        "humanRates": {v: _r4(group.human_rate(v)) for v in values},
    }


def analyse(
    rows: Iterable["GroupValueCount"],
    *,
    metric_value: float,
    privileged: str | None = None,
    unprivileged: str | None = None,
    favorable: frozenset[str] = DEFAULT_FAVORABLE_VALUES,
    analyzed_at: str | None = None,
) -> JSONObject:
    """The amplification analysis over the correlated decisions' counts: groups, rates, score, risk level
    (docs/reference/fairness.md, Amplification analysis), as the analysis object
    (docs/reference/fairness.md, The analysis object)."""
    groups = group_counts(rows)
    priv, unpriv = choose_groups(
        groups, privileged=privileged, unprivileged=unprivileged, favorable=favorable
    )
    pair = [g for g in (priv, unpriv) if g is not None]
    values = sorted({v for g in pair for v in (*g.ai, *g.human) if g.ai.get(v) or g.human.get(v)})
    result: JSONObject = {
        "status": "completed",
        "amplificationScore": None,
        "riskLevel": None,
        "direction": None,
        "modelDisparityObserved": None,
        "humanDisparity": None,
        "modelDisparityReported": metric_value,
        "decisionsAnalyzed": sum(g.decisions for g in pair),
        "groups": {
            "privileged": _group_json(priv, values, privileged),
            "unprivileged": _group_json(unpriv, values, unprivileged),
        },
        "analyzedAt": analyzed_at,
    }
    if priv is None or unpriv is None or min(priv.decisions, unpriv.decisions) < MIN_GROUP_DECISIONS:
        result["status"] = "insufficient_data"
        return result

    a = {v: priv.ai_rate(v) - unpriv.ai_rate(v) for v in values}
    h = {v: priv.human_rate(v) - unpriv.human_rate(v) for v in values}
    d_ai = sum((abs(x) for x in a.values()), Fraction(0)) / 2
    d_h = sum((abs(x) for x in h.values()), Fraction(0)) / 2
    amp = sum((_sign(a[v]) * (h[v] - a[v]) for v in values), Fraction(0)) / 2
    score = Fraction(0) if d_ai >= 1 else min(max(amp / (1 - d_ai), Fraction(0)), Fraction(1))
    score = round(score, 4)
    result.update(
        {
            "amplificationScore": float(score),
            "riskLevel": risk_level(score),
            "direction": "amplifying" if amp > 0 else "mitigating" if amp < 0 else "neutral",
            "modelDisparityObserved": _r4(d_ai),
            "humanDisparity": _r4(d_h),
        }
    )
    return result
