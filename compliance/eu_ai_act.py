"""The EU AI Act Article 14 report (docs/reference/reports.md): five sections, in the order the reference gives, from the
gathered evidence. Article 14(4) lists what human oversight must enable, (a) to (e); the
executive summary says what the service measured for each."""

from typing import Any

from calibration import rules
from compliance import printing, recommendations
from compliance.evidence import SERIOUS, UNRESOLVED

COMPLIANT = "COMPLIANT"
NEEDS_REVIEW = "NEEDS_REVIEW"
NON_COMPLIANT = "NON_COMPLIANT"


def compliance_status(*, incidents: int, total: int, open_serious: list[str]) -> tuple[str, str]:
    """the reports reference's rule, in integers so 5 % and 15 % are exact: COMPLIANT under 5 % automation-bias
    incidents with no open high or critical alert; NON_COMPLIANT at 15 % or more, or with an
    open critical alert; else NEEDS_REVIEW. With no decision there is no evidence: NEEDS_REVIEW."""
    if "critical" in open_serious:
        return NON_COMPLIANT, "An open critical alert."
    if total == 0:
        return NEEDS_REVIEW, "No decision in the period and filters: no evidence of oversight."
    if incidents * 100 >= 15 * total:
        return NON_COMPLIANT, "Automation-bias incidents are 15 % of decisions or more."
    if incidents * 100 < 5 * total and not open_serious:
        return COMPLIANT, "Automation-bias incidents under 5 % and no open high or critical alert."
    if open_serious:
        return NEEDS_REVIEW, "An open high-severity alert."
    return NEEDS_REVIEW, "Automation-bias incidents between 5 % and 15 % of decisions."


def _open_serious(evidence: dict[str, Any]) -> list[str]:
    """Severities of the open (unresolved) high or critical alerts: amplification alerts not
    yet resolved, and the period's bias alerts (they have no triage state: each one stands)."""
    severities = [a["severity"] for a in evidence["amplification"]["unresolved_high_or_critical"]]
    for severity, count in evidence["bias_alerts"]["by_severity"].items():
        if severity in SERIOUS:
            severities.extend([severity] * count)
    return severities


def status_of(*, counts: dict[str, int], alerts: dict[str, Any]) -> str:
    """The compliance status alone, from the category counts and the alerts (the CSV format,
    which holds only the decision log, is judged by the same rule)."""
    return compliance_status(
        incidents=counts["OVERTRUSTING"], total=counts["total"], open_serious=_open_serious(alerts)
    )[0]


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 6) if den else None


def executive_summary(evidence: dict[str, Any]) -> dict[str, Any]:
    org = evidence["organisation"]
    counts = org["counts"]
    total = org["decisions"]
    serious = _open_serious(evidence)
    status, reason = compliance_status(incidents=counts["overtrust"], total=total, open_serious=serious)
    return {
        "total_decisions": total,
        "automation_bias_incidents": counts["overtrust"],
        "automation_bias_rate": _ratio(counts["overtrust"], total),
        "human_override_rate": org["override_rate"],
        "compliance_status": status,
        "compliance_status_reason": reason,
        "algorithm_aversion_incidents": counts["undertrust"],
        "reviewers": len(evidence["users"]),
        "trust_score": org["trust_score"],
        "open_high_or_critical_alerts": len(serious),
    }


def oversight_measures(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """Article 14(4)(a) to (e): what the service measured for each, in sentences."""
    org = evidence["organisation"]
    counts = org["counts"]
    total = org["decisions"]
    amp = evidence["amplification"]
    chain = evidence["chain"]
    handled = sum(v for k, v in amp["by_status"].items() if k not in UNRESOLVED)
    overrides_by_group = [
        f"{attribute} {group['group']} {printing.pct(group['override_rate'])}"
        for attribute, data in evidence["subgroups"]["attributes"].items()
        for group in data["groups"]
    ]
    return [
        {
            "point": "14(4)(a)",
            "obligation": "Understand the system's capacities and limitations; detect anomalies",
            "measured": (
                f"{printing.count(amp['total'])} amplification alert(s) raised up to the period's end, "
                f"{printing.count(handled)} triaged to resolution or false positive; "
                f"{printing.count(evidence['bias_alerts']['total'])} bias alert(s) in the period; the audit "
                f"chain is {'valid' if chain['valid'] else 'INVALID'} over "
                f"{printing.count(chain['entries_checked'])} entries."
            ),
        },
        {
            "point": "14(4)(b)",
            "obligation": "Remain aware of automation bias",
            "measured": (
                f"{printing.count(counts['overtrust'])} automation-bias incident(s) in "
                f"{printing.count(total)} decisions; over-reliance "
                f"{printing.pct(org['overreliance_rate'], 'overreliance_rate')}, RAIR "
                f"{printing.pct(org['rair'], 'rair')}, RSR {printing.pct(org['rsr'], 'rsr')}; agreement "
                "by confidence band is in the calibration analysis."
            ),
        },
        {
            "point": "14(4)(c)",
            "obligation": "Correctly interpret the output (interpretation aids)",
            "measured": (
                f"The AI's confidence is recorded with {printing.count(counts['with_confidence'])} of "
                f"{printing.count(total)} decisions "
                f"({printing.pct(_ratio(counts['with_confidence'], total), 'mean_ai_confidence')}); mean "
                f"confidence {printing.pct(org['mean_ai_confidence'], 'mean_ai_confidence')}."
            ),
        },
        {
            "point": "14(4)(d)",
            "obligation": "Decide not to use, disregard, override or reverse the output",
            "measured": (
                f"{printing.count(counts['overridden'])} override(s), a rate of "
                f"{printing.pct(org['override_rate'], 'override_rate')}; by subgroup: "
                + ("; ".join(overrides_by_group) or "no subgroup data in the period")
                + "."
            ),
        },
        {
            "point": "14(4)(e)",
            "obligation": "Intervene or interrupt the system (stop)",
            "measured": (
                "No interruption or stop event is recorded by this service for the period; "
                "record such events with the decisions to evidence this point."
            ),
        },
    ]


def sections(evidence: dict[str, Any], log_preview: list[dict[str, Any]]) -> dict[str, Any]:
    summary = executive_summary(evidence)
    summary["oversight_measures"] = oversight_measures(evidence)
    org = dict(evidence["organisation"])
    return {
        "executive_summary": summary,
        "trust_calibration_analysis": {
            "organisation": org,
            "confidence_bands": evidence["confidence_bands"],
            "trend": evidence["trend"],
            "users": evidence["users"],
            "risk_users": [u for u in evidence["users"] if rules.is_risk_user(u)],
            "review_effort": evidence["review_effort"],
            "vigilance": evidence["vigilance"],
        },
        "bias_detection_summary": {
            "subgroups": evidence["subgroups"],
            "bias_alerts": evidence["bias_alerts"],
            "amplification_alerts": evidence["amplification"],
        },
        "audit_trail": {
            "decisions": summary["total_decisions"],
            "chain_verification": evidence["chain"],
            "checkpoint": evidence["checkpoint"],
            "models": evidence["models"],
            "decision_log": log_preview,
        },
        "recommendations": recommendations.derive(evidence, summary),
    }
