"""Bias detection (docs/reference/bias.md): the findings of one attribute's groups, compared with the
reference group of each bias type, on exact fractions. Pure: no database access."""

from fractions import Fraction
from typing import Any

from bias.domain import (
    MIN_GROUP_SIZE,
    REGULATION,
    cap_severity,
    difference_severity,
    ratio_severity,
    two_proportion_p_value,
)
from bias.models import SEVERITY_RANK
from bias.selectors import GroupCounts


def _rate(x: int, n: int) -> Fraction:
    return Fraction(x, n)


def _round(value: Fraction | float) -> float:
    return round(float(value), 6)


_RATE_METRICS = [
    # bias_type, numerator, denominator, higher_is_better
    ("outcome_disparity", lambda g: g.favorable, lambda g: g.decisions, True),
    ("recommendation_disparity", lambda g: g.ai_favorable, lambda g: g.decisions, True),
    ("override_disparity", lambda g: g.decisions - g.agreements, lambda g: g.decisions, False),
    ("accuracy_disparity", lambda g: g.with_outcome - g.correct, lambda g: g.with_outcome, False),
]


def _reference(groups: list[tuple[Any, int, int]], higher_is_better: bool):
    """The advantaged group: the best rate among the groups with at least 30 decisions (in
    the metric's denominator), or among all groups when none is that large, so that a tiny
    group's lucky rate never becomes everyone's yardstick. Ties: the larger group, then the
    name."""
    eligible = [g for g in groups if g[2] >= MIN_GROUP_SIZE] or groups
    sign = 1 if higher_is_better else -1
    return max(eligible, key=lambda g: (sign * _rate(g[1], g[2]), g[2], g[0].group))


def attribute_findings(attribute: str, groups: list[GroupCounts]) -> list[dict[str, Any]]:
    """The findings (docs/reference/bias.md, Findings) for one attribute: every group compared with the
    reference group of each bias type; findings of severity none left out."""
    findings: list[dict[str, Any]] = []
    for bias_type, numerator, denominator, higher_is_better in _RATE_METRICS:
        rows = [(g, numerator(g), denominator(g)) for g in groups if denominator(g) > 0]
        if len(rows) < 2:
            continue
        ref, x_ref, n_ref = _reference(rows, higher_is_better)
        rate_ref = _rate(x_ref, n_ref)
        for g, x, n in rows:
            if g is ref:
                continue
            rate = _rate(x, n)
            gap = (rate_ref - rate) if higher_is_better else (rate - rate_ref)
            if gap <= 0:
                continue
            p_value = two_proportion_p_value(x, n, x_ref, n_ref)
            cases = [(bias_type, gap, difference_severity(gap))]
            if bias_type == "outcome_disparity" and rate_ref > 0:
                ratio = rate / rate_ref
                cases.append(("disparate_impact", ratio, ratio_severity(ratio)))
            for kind, value, severity in cases:
                severity = cap_severity(severity, n_group=n, n_reference=n_ref, p_value=p_value)
                if severity == "none":
                    continue
                findings.append(
                    {
                        "bias_type": kind,
                        "attribute": attribute,
                        "group": g.group,
                        "reference_group": ref.group,
                        "group_rate": _round(rate),
                        "reference_rate": _round(rate_ref),
                        "value": _round(value),
                        "sample_sizes": {"group": n, "reference_group": n_ref},
                        "p_value": p_value,
                        "severity": severity,
                        "regulation": REGULATION,
                    }
                )
    return findings


def findings_sorted(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        findings, key=lambda f: (-SEVERITY_RANK[f["severity"]], f["attribute"], f["bias_type"], f["group"])
    )
