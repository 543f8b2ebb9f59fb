"""Bias detection (docs/reference/bias.md): the findings of one analysis, every group compared with
the reference group of each bias type, on exact fractions; every comparison's test, and the
Benjamini-Hochberg adjustment over all of them. Pure: no database access."""

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TypedDict

from bias.domain import (
    MIN_GROUP_SIZE,
    REGULATION,
    SIGNIFICANCE,
    Rate,
    difference_severity,
    ratio_severity,
    reference_rate,
)
from bias.models import SEVERITY_RANK
from bias.significance import MIN_TESTABLE, Comparison, TestName, benjamini_hochberg, compare
from bias.subgroup_counts import GroupCounts


class SampleSizes(TypedDict):
    group: int
    reference_group: int


class Finding(TypedDict):
    """One finding as the API shows it (docs/reference/bias.md, Findings)."""

    bias_type: str
    attribute: str
    group: str
    reference_group: str
    group_rate: float
    reference_rate: float
    value: float
    sample_sizes: SampleSizes
    testable: bool
    test: TestName | None
    p_value: float | None
    q_value: float | None
    severity: str
    regulation: str
    finding: bool


def _round(value: Fraction | float) -> float:
    return round(float(value), 6)


Counter = Callable[[GroupCounts], int]
_RATE_METRICS: list[tuple[str, Counter, Counter, bool]] = [
    # bias_type, numerator, denominator, higher_is_better
    ("outcome_disparity", lambda g: g.favorable, lambda g: g.decisions, True),
    ("recommendation_disparity", lambda g: g.ai_favorable, lambda g: g.decisions, True),
    ("override_disparity", lambda g: g.decisions - g.agreements, lambda g: g.decisions, False),
    ("accuracy_disparity", lambda g: g.with_outcome - g.correct, lambda g: g.with_outcome, False),
]


@dataclass
class _Candidate:
    """A comparison of one group with its reference for one rate, before the adjustment."""

    attribute: str
    bias_type: str
    group: Rate
    reference: Rate
    gap: Fraction  # > 0: the group is worse off
    comparison: Comparison
    q_value: float | None = None


def _comparisons(attribute: str, groups: list[GroupCounts]) -> tuple[list[_Candidate], int]:
    """Every group compared with the reference group of each rate (better-off groups too:
    they were compared), and the size of the family these comparisons stand for: every pair
    of testable groups of each rate. The reference is the best of the groups, chosen from the
    data, so its comparisons are the widest of all the pairs; counting only them would let
    that choice inflate the discoveries (docs/reference/bias.md, Significance)."""
    out: list[_Candidate] = []
    family = 0
    for bias_type, numerator, denominator, higher_is_better in _RATE_METRICS:
        rates = [Rate(g.group, numerator(g), denominator(g)) for g in groups if denominator(g) > 0]
        if len(rates) < 2:
            continue
        testable = sum(r.n >= MIN_TESTABLE for r in rates)
        family += testable * (testable - 1) // 2
        ref = reference_rate(rates, higher_is_better=higher_is_better)
        for rate in rates:
            if rate is ref:
                continue
            gap = (ref.value - rate.value) if higher_is_better else (rate.value - ref.value)
            out.append(
                _Candidate(attribute, bias_type, rate, ref, gap, compare(rate.x, rate.n, ref.x, ref.n))
            )
    return out, family


def capped(severity: str, candidate: _Candidate) -> str:
    """Medium and above need both groups of at least 30, a test and q < 0.05; otherwise the
    finding stays at low: the gap is in the data, it is just not established."""
    if SEVERITY_RANK[severity] <= SEVERITY_RANK["low"]:
        return severity
    established = (
        min(candidate.group.n, candidate.reference.n) >= MIN_GROUP_SIZE
        and candidate.q_value is not None
        and candidate.q_value < SIGNIFICANCE
    )
    return severity if established else "low"


def is_finding(size_severity: str, candidate: _Candidate) -> bool:
    """A comparison is a finding when its gap reaches the severity table's `low` and it is
    tested with q < 0.05 (docs/reference/bias.md, Findings): a gap the data do not establish is
    listed among the comparisons, not reported as bias."""
    return (
        SEVERITY_RANK[size_severity] >= SEVERITY_RANK["low"]
        and candidate.q_value is not None
        and candidate.q_value < SIGNIFICANCE
    )


def _compared(candidate: _Candidate) -> list[Finding]:
    """The comparisons of one candidate: its rate difference and, for the favourable rate, the
    four-fifths ratio, each marked a finding or not."""
    gap = candidate.gap
    size = difference_severity(gap) if gap > 0 else "none"
    cases = [(candidate.bias_type, gap, size)]
    if candidate.bias_type == "outcome_disparity" and candidate.reference.x > 0:
        # The four-fifths rule: the same two favourable rates, as a ratio; the same test.
        ratio = candidate.group.value / candidate.reference.value
        cases.append(("disparate_impact", ratio, ratio_severity(ratio) if gap > 0 else "none"))
    out: list[Finding] = []
    for bias_type, value, size_severity in cases:
        finding = is_finding(size_severity, candidate)
        out.append(
            {
                "bias_type": bias_type,
                "attribute": candidate.attribute,
                "group": candidate.group.group,
                "reference_group": candidate.reference.group,
                "group_rate": _round(candidate.group.value),
                "reference_rate": _round(candidate.reference.value),
                "value": _round(value),
                "sample_sizes": {"group": candidate.group.n, "reference_group": candidate.reference.n},
                "testable": candidate.comparison.testable,
                "test": candidate.comparison.test,
                "p_value": candidate.comparison.p_value,
                "q_value": candidate.q_value,
                "severity": capped(size_severity, candidate),
                "regulation": REGULATION,
                "finding": finding,
            }
        )
    return out


def analysis_findings(groups_by_attribute: Mapping[str, list[GroupCounts]]) -> list[Finding]:
    """The findings of one analysis (see `analysis`)."""
    return analysis(groups_by_attribute)[0]


def analysis(groups_by_attribute: Mapping[str, list[GroupCounts]]) -> tuple[list[Finding], list[Finding]]:
    """(the findings, the other comparisons) of one analysis (docs/reference/bias.md, Findings):
    the comparisons of every attribute, their p-values adjusted together by Benjamini-Hochberg
    over the family of every pair of testable groups, severities capped; a comparison is a
    finding only with a gap of at least `low` and q < 0.05. Both lists ordered worst first."""
    candidates: list[_Candidate] = []
    family = 0
    for attribute in sorted(groups_by_attribute):
        found, pairs = _comparisons(attribute, groups_by_attribute[attribute])
        candidates += found
        family += pairs
    tested = [c for c in candidates if c.comparison.p_value is not None]
    q_values = benjamini_hochberg([c.comparison.p_value or 0.0 for c in tested], family_size=family)
    for candidate, q_value in zip(tested, q_values, strict=True):
        candidate.q_value = q_value
    compared = sorted(
        (f for c in candidates for f in _compared(c)),
        key=lambda f: (-SEVERITY_RANK[f["severity"]], f["attribute"], f["bias_type"], f["group"]),
    )
    return [f for f in compared if f["finding"]], [f for f in compared if not f["finding"]]


class Detection(TypedDict):
    """POST /detect-bias's answer (docs/reference/bias.md)."""

    decision_id: str
    bias_detected: bool
    severity: str
    findings: list[Finding]
    comparisons: list[Finding]
    alert_id: str | None
    analyzed_at: dt.datetime
