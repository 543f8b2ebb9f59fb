"""The Texas Responsible AI Governance Act report (HB 149, Bus. & Com. Code ch. 552, in force
2026-01-01): the same evidence as the EU report, organised by what TRAIGA asks a deployer to
be able to show. Statements of law are short and cite the section; every figure comes from
the evidence."""

from collections.abc import Mapping

from compliance import citations, eu_ai_act, printing, recommendations
from compliance.documents import Evidence
from config.jsondoc import JSONObject


def _nist(evidence: Evidence, summary: JSONObject) -> list[JSONObject]:
    """NIST AI RMF 1.0 functions with what this service evidences for each (§552.105(e)
    names recognised frameworks such as the AI RMF as a defence)."""
    amp = evidence["amplification"]
    return [
        {
            "function": "GOVERN",
            "evidence": (
                "Every AI-assisted decision is logged with reviewer, model and version in a "
                "hash-chained audit trail, verified when this report was generated (post-deployment "
                "monitoring and safeguards); "
                "API key changes and staff actions in the console are logged too."
            ),
        },
        {
            "function": "MAP",
            "evidence": (
                f"{printing.count(len(evidence['models']))} model version(s) in use, "
                f"{printing.count(len(evidence['subgroups']['attributes']))} protected attribute(s) monitored."
            ),
        },
        {
            "function": "MEASURE",
            "evidence": (
                f"Trust calibration of {printing.count(summary['reviewers'])} reviewer(s) (trust score "
                f"{printing.score(summary['trust_score'], 'trust_score')}), subgroup disparity per "
                f"attribute, {printing.count(amp['total'])} fairness signal alert(s) from external tools."
            ),
        },
        {
            "function": "MANAGE",
            "evidence": (
                "Alerts are triaged through a status history that records who changed each one, when "
                f"and why (amplification alerts up to the period's end: "
                f"{printing.by_key(amp['by_status'], ('open', 'acknowledged', 'resolved', 'false_positive'))}); "
                "webhooks notify the deployer of miscalibration, bias and amplification as they happen."
            ),
        },
    ]


def _oversight(figures: Mapping[str, object], key: str) -> dict[str, object]:
    """Review effort or vigilance in this report's own words: what it evidences, and the note of
    withheld rows, neither citing the EU AI Act's articles (docs/reference/reports.md, Citations)."""
    out: dict[str, object] = {**figures, "evidences": citations.point(key, citations.TEXAS_TRAIGA)}
    if "reviewers_withheld" in out:
        out["reviewers_withheld"] = citations.withheld(citations.TEXAS_TRAIGA)
    return out


def sections(evidence: Evidence, log_preview: list[JSONObject]) -> JSONObject:
    summary = eu_ai_act.executive_summary(evidence)
    org = evidence["organisation"]
    counts = org["counts"]
    total = org["decisions"]
    amp = evidence["amplification"]
    return {
        "system_and_purpose": {
            "models": evidence["models"],
            "decisions": total,
            "reviewers": summary["reviewers"],
            "system_description": evidence["system_description"],
            "human_review": (
                "AI recommendations reviewed by a human before a decision takes effect; every "
                "decision records the AI's recommendation, its confidence where given, the "
                "reviewer's decision and, when known, the outcome."
            ),
        },
        "disclosure_and_human_review": {
            "human_reviewed_decisions": total,
            "human_override_rate": org["override_rate"],
            "switch_rate": org["switch_rate"],
            "confidence_shown": counts["with_confidence"],
            "initial_decisions_recorded": counts["with_initial_decision"],
            "review_effort": _oversight(evidence["review_effort"], "review_effort"),
            "vigilance": _oversight(evidence["vigilance"], "vigilance"),
            "note": (
                "TRAIGA requires governmental agencies to disclose to consumers that they interact "
                "with an AI system; this service records human review, not the disclosure itself."
            ),
        },
        "discrimination_screening": {
            "subgroups": evidence["subgroups"],
            "bias_alerts": evidence["bias_alerts"],
            "amplification_alerts": amp,
            "note": (
                "A disparate impact is not by itself sufficient to show an intent to discriminate "
                "(§552.056); these figures screen for disparities to investigate."
            ),
        },
        "performance_and_limitations": {
            "organisation": org,
            "thresholds": evidence["thresholds"],
            "confidence_check": evidence["confidence_check"],
            "confidence_bands": evidence["confidence_bands"],
            "known_limitations": [
                f"Outcomes are known for {printing.count(counts['with_outcome'])} of {printing.count(total)} decisions; "
                "accuracy and over-reliance are measured on those only.",
                "Subgroup figures come from daily statistics of whole days.",
                "Categories of decisions without outcome rest on the AI's stated confidence.",
                f"{printing.count(org['confidence_decisions'])} of {printing.count(org['scored_decisions'])} "
                "scored decisions carry the AI's stated confidence: over- and under-trust (reliance) cannot "
                "be judged without it, so decisions with an outcome alone enter neither rate.",
            ],
        },
        "monitoring_and_safeguards": {
            "trend": evidence["trend"],
            "chain_verification": evidence["chain"],
            "checkpoint": evidence["checkpoint"],
            "erasures": evidence["erasures"],
            "drift_monitoring": eu_ai_act.drift_monitoring(evidence, "texas_traiga"),
            "alerts_by_status": amp["by_status"],
            "users": evidence["users"],
            "decision_log": log_preview,
        },
        "nist_ai_rmf_alignment": {"functions": _nist(evidence, summary)},
        "incidents_and_cure_actions": {
            "automation_bias_incidents": counts["overtrust"],
            "algorithm_aversion_incidents": counts["undertrust"],
            "alerts_in_period": amp["in_period"] + evidence["bias_alerts"]["total"],
            "amplification_alerts": amp["items"],
            "bias_alerts": evidence["bias_alerts"]["items"],
            "note": (
                "TRAIGA gives a deployer notice and 60 days to cure an alleged violation before an "
                "action; each alert below is printed with its status history, which records the "
                "cure taken: who changed it, when, and their notes."
            ),
        },
        "recommendations": recommendations.derive(evidence, summary, template="texas_traiga"),
    }
