"""The finding in sentences, printed first in each PDF (docs/reference/reports.md)."""

import datetime as dt
from typing import Any

from compliance import printing
from compliance.evidence import SERIOUS
from compliance.report import Report


def summary(report: Report) -> list[str]:
    """The finding in sentences: status and why (EU only), the figures that drove it, the
    alerts, the chain, and what changed since the previous period of the same length."""
    sections = report.data["sections"]
    eu = report.template == "eu_ai_act"
    org = (sections["trust_calibration_analysis"] if eu else sections["performance_and_limitations"])[
        "organisation"
    ]
    total = org["decisions"]
    counts = org["counts"]
    paragraphs = []
    if eu:
        summary = sections["executive_summary"]
        reason = summary["compliance_status_reason"].rstrip(".").replace(" %", "%")
        paragraphs.append(
            f"This report finds the period {summary['compliance_status']}. The reason: "
            f"{reason[:1].lower() + reason[1:]}."
        )
    else:
        paragraphs.append(
            "This report states no compliance status of its own: the Texas Act sets no numeric "
            "threshold for human review, so the figures below are evidence for the deployer's own "
            "assessment under the Act."
        )
    if total == 0:
        paragraphs.append(
            "No decision matches the period and filters, so the report holds no evidence of human "
            "oversight: every rate below is not measured for that reason."
        )
    else:
        over = counts["overtrust"] / total
        paragraphs.append(
            f"{printing.count(total)} AI-assisted decisions by {printing.count(len(sections_users(report)))} "
            f"reviewer(s) were analysed. In {printing.count(counts['overtrust'])} of them "
            f"({printing.pct(over)}) the reviewer followed the AI when it was wrong, or unsure where the "
            f"outcome is not yet known (automation bias); in {printing.count(counts['undertrust'])} "
            f"({printing.pct(counts['undertrust'] / total)}) the reviewer overrode the AI when it was right "
            f"or confident (algorithm aversion). Reviewers overrode the AI in "
            f"{printing.pct(org['override_rate'], 'override_rate')} of decisions."
        )
        paragraphs.append(
            f"The organisation's trust score is {printing.score(org['trust_score'], 'trust_score')} of 1 "
            f"(risk level {org['risk_level']}), its calibration gap "
            f"{printing.points(org['calibration_gap'], 'calibration_gap')} (category {org['category']}). "
            + (
                "The category reads the gap, in which over-trust and under-trust cancel out; the trust "
                "score counts both, so a CALIBRATED category with a high risk level means reviewers err "
                "in both directions."
                if org["category"] == "CALIBRATED" and org["risk_level"] != "low"
                else "The risk level grades the trust score; the category says in which direction "
                "reliance misses the AI's record (Appendix B)."
            )
        )
    alerts = alert_sentence(report, SERIOUS)
    if alerts:
        paragraphs.append(alerts)
    chain = (sections["audit_trail"] if eu else sections["monitoring_and_safeguards"])["chain_verification"]
    paragraphs.append(
        f"The audit chain verified {'valid' if chain['valid'] else 'INVALID'} over "
        f"{printing.count(chain['entries_checked'])} entries at {printing.when(chain.get('verified_at'))}"
        + ("." if chain["valid"] else f"; the first invalid entry is {chain.get('first_invalid_sequence')}.")
    )
    paragraphs.append(change_sentence(report, total, counts, org))
    return paragraphs


def sections_users(report: Report) -> list[dict[str, Any]]:
    sections = report.data["sections"]
    if report.template == "eu_ai_act":
        return list(sections["trust_calibration_analysis"]["users"])
    return list(sections["monitoring_and_safeguards"]["users"])


def alert_sentence(report: Report, serious: tuple[str, ...]) -> str:
    sections = report.data["sections"]
    amp = (
        sections["bias_detection_summary"]["amplification_alerts"]
        if report.template == "eu_ai_act"
        else sections["discrimination_screening"]["amplification_alerts"]
    )
    bias = (
        sections["bias_detection_summary"]["bias_alerts"]
        if report.template == "eu_ai_act"
        else sections["discrimination_screening"]["bias_alerts"]
    )
    open_serious = [a["alert_id"] for a in amp["unresolved_high_or_critical"]]
    serious_bias = sum(n for s, n in bias["by_severity"].items() if s in serious)
    return (
        f"{printing.count(amp.get('in_period', 0))} amplification alert(s) and "
        f"{printing.count(bias['total'])} bias alert(s) were raised or changed in the period"
        + (f", {printing.count(serious_bias)} of the bias alerts high or critical" if serious_bias else "")
        + ". "
        + (
            f"Still open or acknowledged at high or critical severity: {printing.enumeration(open_serious)}."
            if open_serious
            else "No high or critical amplification alert is open."
        )
    )


def change_sentence(report: Report, total: int, counts: dict[str, int], org: dict[str, Any]) -> str:
    previous = report.data["summary"].get("previous_period")
    if not previous:
        return (
            "The period of the same length before this one holds no decision, so no change since a "
            "previous period is reported."
        )
    now_rate = counts["overtrust"] / total if total else None
    parts = [
        f"In the previous period of the same length ({printing.when(previous['from'])[:10]} to "
        f"{day_before(previous['to'])}), "
        f"{printing.count(previous['total_decisions'])} decisions were analysed with an automation-bias "
        f"rate of {printing.pct(previous['automation_bias_rate'])}"
    ]
    if now_rate is not None:
        parts.append(f" ({printing.points(now_rate - previous['automation_bias_rate'])} since)")
    parts.append(
        f", an override rate of {printing.pct(previous['human_override_rate'], 'override_rate')} and a "
        f"trust score of {printing.score(previous['trust_score'], 'trust_score')}"
    )
    if org["trust_score"] is not None and previous["trust_score"] is not None:
        parts.append(f" ({org['trust_score'] - previous['trust_score']:+.2f} since)")
    return "".join(parts) + "."


def day_before(instant: str) -> str:
    """The last whole UTC day before an exclusive period end."""
    end = dt.datetime.fromisoformat(instant.replace("Z", "+00:00")) - dt.timedelta(microseconds=1)
    return end.astimezone(dt.UTC).date().isoformat()
