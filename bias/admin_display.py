"""HTML pieces of the bias alert page: each finding as the groups compared, their sizes and rates,
the gap or ratio, and its test's p- and q-value in a readable form (docs/reference/bias.md,
Findings). Everything is escaped through format_html."""

from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from bias.models import BiasAlert
from config.admin import badge, count, p_text
from config.jsondoc import JSONObject

# What each type compares (docs/reference/bias.md, Bias types) and how its value reads.
TYPES = {
    "outcome_disparity": ("Outcome disparity", "favourable rate of the final decisions", "gap"),
    "disparate_impact": ("Disparate impact", "favourable rate of the final decisions", "ratio"),
    "recommendation_disparity": ("Recommendation disparity", "favourable rate of the AI's recommendations", "gap"),
    "override_disparity": ("Override disparity", "override rate (final differs from the AI)", "gap"),
    "accuracy_disparity": ("Accuracy disparity", "error rate (final differs from the known outcome)", "gap"),
}  # fmt: skip
TESTS = {"z_test": "z-test", "fisher_exact": "Fisher's exact test"}


def type_label(bias_type: str) -> str:
    return TYPES.get(bias_type, (bias_type.replace("_", " "), "", ""))[0]


def _pct(value: object) -> str:
    return f"{float(value) * 100:.1f}%" if isinstance(value, int | float) else "-"


# a stored finding, JSON by name
def _value(finding: JSONObject) -> str:
    value = finding.get("value")
    if not isinstance(value, int | float):
        return "-"
    kind = TYPES.get(finding.get("bias_type", ""), ("", "", "gap"))[2]
    if kind == "ratio":
        return f"ratio {value:.2f}" + (" (under 0.8)" if value < 0.8 else "")
    return f"gap {value * 100:.1f} points"


# a stored finding, JSON by name
def _q_text(finding: JSONObject) -> str:
    # An alert stored before the adjustment existed has a p-value and no q-value
    # (docs/reference/bias.md, Alerts stored before): not adjusted, rather than not tested.
    if finding.get("q_value") is None and finding.get("p_value") is not None:
        return "not adjusted"
    return p_text(finding.get("q_value"))


# Any: a stored finding, JSON by name, and the table row's mixed cells
def _row(finding: dict[str, Any]) -> tuple[Any, ...]:
    label, compared, _ = TYPES.get(finding.get("bias_type", ""), (finding.get("bias_type", "-"), "", ""))
    sizes = finding.get("sample_sizes") or {}
    test = TESTS.get(finding.get("test") or "", "not tested (a group under 5)")
    return (
        label, compared, finding.get("attribute", "-"),
        finding.get("group", "-"), count(sizes.get("group")), _pct(finding.get("group_rate")),
        finding.get("reference_group", "-"), count(sizes.get("reference_group")), _pct(finding.get("reference_rate")),
        _value(finding), test, p_text(finding.get("p_value")), _q_text(finding),
        badge(finding.get("severity")),
    )  # fmt: skip


def findings_table(alert: BiasAlert) -> SafeString:
    findings = alert.findings or []
    if not findings:
        return format_html("<p>{}</p>", "No finding stored with this alert.")
    rows = format_html_join(
        "",
        "<tr><th>{}<div class='tc-help'>{}</div></th><td>{}</td>"
        "<td>{}</td><td class='tc-num'>{}</td><td class='tc-num'>{}</td>"
        "<td>{}</td><td class='tc-num'>{}</td><td class='tc-num'>{}</td>"
        "<td class='tc-num'>{}</td><td>{}</td><td class='tc-num'>{}</td><td class='tc-num'>{}</td><td>{}</td></tr>",
        (_row(f) for f in findings),
    )
    return format_html(
        "<table class='tc-rates' id='bias-findings'><thead><tr><th rowspan='2'>Finding (rate compared)</th>"
        "<th rowspan='2'>Attribute</th><th colspan='3'>Group worse off</th><th colspan='3'>Reference group</th>"
        "<th rowspan='2'>Gap or ratio</th><th rowspan='2'>Test</th><th rowspan='2'>p</th><th rowspan='2'>q</th>"
        "<th rowspan='2'>Severity</th></tr><tr><th>Group</th><th>Size</th><th>Rate</th><th>Group</th>"
        "<th>Size</th><th>Rate</th></tr></thead><tbody>{}</tbody></table>"
        "<p class='tc-help'>Gap: the reference group's rate minus the group's (favourable rates), or the group's minus "
        "the reference's (override and error rates), in percentage points. Ratio: the group's favourable rate over the "
        "reference's (under 0.8 is the four-fifths rule's sign of adverse impact). p: the test's two-sided p-value; "
        "q: the p-value adjusted for the number of comparisons (Benjamini-Hochberg). A finding stays low unless "
        "both groups have 30 decisions or more and q is under 0.05.</p>",
        rows,
    )  # fmt: skip


def joined(values: list[str] | None, labels: bool = False) -> str:
    """A JSON list of names as text: "gender, age_group" (bias types by their label)."""
    return ", ".join(type_label(v) if labels else str(v) for v in values or []) or "-"
