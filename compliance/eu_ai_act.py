"""The EU AI Act Article 14 report (docs/reference/reports.md): five sections, in the order the reference gives, from the
gathered evidence. Article 14(4) lists what human oversight must enable, (a) to (e); the
executive summary says what the service measured for each."""

from collections.abc import Sequence

from audit.measures import Figures
from audit.measures_stats import N_TOLERANCE
from calibration import rules
from calibration.documents import UserRow
from compliance import drift_report, printing, recommendations
from compliance.citations import cite
from compliance.documents import Alerts, Drift, Evidence
from compliance.evidence import SERIOUS, UNRESOLVED
from config.jsondoc import JSONObject

COMPLIANT = "COMPLIANT"
NEEDS_REVIEW = "NEEDS_REVIEW"
NON_COMPLIANT = "NON_COMPLIANT"
INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
MIN_SCORED = recommendations.SCORED_MIN  # scored decisions the COMPLIANT status needs
MIN_COVERAGE = recommendations.COVERAGE_MIN  # share of decisions with a confidence or an outcome it needs
MIN_OVERTRUST_N = (
    recommendations.OVERTRUST_N_MIN
)  # effective n of the organisation's over-trust rate it needs
_OVER_FLAGGED = (rules.OVERTRUSTING, rules.NON_DISCRIMINATING)


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def compliance_status(
    *,
    org: Figures,
    users: Sequence[UserRow],
    open_serious: list[str],
    rubber_stampers: int,
    drift_alarms: list[str] | None = None,
) -> tuple[str, str]:
    """The compliance status and its reason (docs/reference/reports.md, "Compliance status (this report only)"): NON_COMPLIANT
    with an open critical alert or the organisation's over-trust flagged; else NEEDS_REVIEW with an
    open high alert, an over-trusting or non-discriminating reviewer, a flagged rubber-stamper or
    a drift alarm not acknowledged by the period's end (`drift_alarms`, their ids); else
    INSUFFICIENT_EVIDENCE when the evidence cannot show calibrated reliance; else COMPLIANT.
    The reason names every rule that holds at the winning level."""
    for status, reasons in (
        (NON_COMPLIANT, _non_compliant(org, open_serious)),
        (NEEDS_REVIEW, _needs_review(users, open_serious, rubber_stampers, drift_alarms or [])),
        (INSUFFICIENT_EVIDENCE, _insufficient(org, users)),
    ):
        if reasons:
            return status, " ".join(reasons)
    over_ci = org["overtrust_rate_ci"]
    undecided = [u for u in users if u["category"] == rules.INSUFFICIENT_DATA]
    judged = (
        "no reviewer flagged"
        if not undecided
        else f"no reviewer flagged among those judged ({len(undecided)} of {len(users)} could not be judged)"
    )
    return COMPLIANT, (
        f"Over-trust {_pct(org['overtrust_rate'] or 0.0)} (95% interval up to {_pct(over_ci[1])}) over "
        f"{org['scored_decisions']} scored decisions ({_pct(org['coverage'] or 0.0)} coverage), {judged} and "
        "no open high or critical alert."
    )


def _non_compliant(org: Figures, open_serious: list[str]) -> list[str]:
    th = rules.thresholds()
    out = []
    if "critical" in open_serious:
        out.append(f"{open_serious.count('critical')} open critical alert(s).")
    over_ci = org["overtrust_rate_ci"]
    if (
        org["scored_decisions"] >= th.min_scored
        and org["overtrust_effective_n"] >= th.organisation_flag_n - N_TOLERANCE
        and over_ci[0] > th.overtrust
    ):
        out.append(
            f"The organisation's over-trust rate is {_pct(org['overtrust_rate'] or 0.0)} (95% interval "
            f"{_pct(over_ci[0])} to {_pct(over_ci[1])}), above {_pct(th.overtrust)}."
        )
    return out


def _needs_review(
    users: Sequence[UserRow], open_serious: list[str], rubber_stampers: int, drift_alarms: list[str]
) -> list[str]:
    out = []
    if "high" in open_serious:
        out.append(f"{open_serious.count('high')} open high-severity alert(s).")
    flagged = sorted(u["user_id"] for u in users if u["category"] in _OVER_FLAGGED)
    if flagged:
        out.append(
            f"{len(flagged)} reviewer(s) over-trust the AI or do not tell good advice from bad "
            f"(OVERTRUSTING or NON_DISCRIMINATING): {', '.join(flagged[:10])}{' and others' if len(flagged) > 10 else ''}."
        )
    if rubber_stampers:
        out.append(
            f"{rubber_stampers} reviewer(s) flagged for quick agreement with the AI (rubber-stamping)."
        )
    if drift_alarms:
        out.append(
            f"{len(drift_alarms)} drift alarm(s) raised before the period's end not acknowledged by it: "
            f"{', '.join(drift_alarms[:10])}{' and others' if len(drift_alarms) > 10 else ''}."
        )
    return out


def _insufficient(org: Figures, users: Sequence[UserRow]) -> list[str]:
    th = rules.thresholds()
    out = []
    undecided = [u for u in users if u["category"] == rules.INSUFFICIENT_DATA]
    held = sum(u["scored_decisions"] for u in undecided)
    if undecided and 2 * held > org["scored_decisions"]:
        out.append(
            f"{len(undecided)} of {len(users)} reviewers have too little evidence for a category "
            f"({held} of {org['scored_decisions']} scored decisions)."
        )
    if org["scored_decisions"] < MIN_SCORED:
        out.append(
            f"Only {org['scored_decisions']} decision(s) carry a confidence or an outcome; at least {MIN_SCORED} "
            "are needed to show calibrated reliance."
        )
    if (org["coverage"] or 0.0) < MIN_COVERAGE:
        out.append(
            f"Only {_pct(org['coverage'] or 0.0)} of the decisions carry a confidence or an outcome; at least "
            f"{_pct(MIN_COVERAGE)} are needed."
        )
    if org["overtrust_effective_n"] < MIN_OVERTRUST_N - N_TOLERANCE:
        out.append(
            f"The over-trust rate rests on an effective {org['overtrust_effective_n']:.1f} decisions where the AI "
            f"was more likely wrong; at least {MIN_OVERTRUST_N} are needed."
            + (
                f" {org['confidence_decisions']} of {org['scored_decisions']} scored decisions carry the AI's "
                "confidence: reliance cannot be judged without the AI's stated confidence."
                if org["confidence_decisions"] < org["scored_decisions"]
                else ""
            )
        )
    elif org["overtrust_rate_ci"][1] >= th.overtrust:
        out.append(
            f"The over-trust rate's 95% interval reaches {_pct(org['overtrust_rate_ci'][1])}: the evidence cannot "
            f"rule out a rate of {_pct(th.overtrust)} or more."
        )
    return out


def _open_serious(evidence: Alerts) -> list[str]:
    """Severities of the open (unresolved) high or critical alerts: amplification alerts not
    yet resolved, and the period's bias alerts (they have no triage state: each one stands)."""
    severities = [a["severity"] for a in evidence["amplification"]["unresolved_high_or_critical"]]
    for severity, count in evidence["bias_alerts"]["by_severity"].items():
        if severity in SERIOUS:
            severities.extend([severity] * count)
    return severities


def status_of(
    *,
    org: Figures,
    users: Sequence[UserRow],
    alerts: Alerts,
    rubber_stampers: int,
    drift: Drift,
) -> str:
    """The compliance status alone (the CSV format, which holds only the decision log, is judged by
    the same rule)."""
    return compliance_status(
        org=org,
        users=users,
        open_serious=_open_serious(alerts),
        rubber_stampers=rubber_stampers,
        drift_alarms=drift_report.unacknowledged(drift["rows"], end=drift["end"]),
    )[0]


def drift_monitoring(evidence: Evidence, template: str) -> JSONObject:
    """The `drift_monitoring` member of either template (compliance/drift_report.py)."""
    drift = evidence["drift"]
    return drift_report.section(
        drift["rows"],
        start=drift["start"],
        end=drift["end"],
        template=template,
        per_person=drift["per_person"],
    )


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 6) if den else None


def executive_summary(evidence: Evidence) -> JSONObject:
    org = evidence["organisation"]
    counts = org["counts"]
    total = org["decisions"]
    serious = _open_serious(evidence)
    status, reason = compliance_status(
        org=org,
        users=evidence["users"],
        open_serious=serious,
        rubber_stampers=evidence["review_effort"]["team"]["flagged_reviewers"],
        drift_alarms=drift_report.unacknowledged(evidence["drift"]["rows"], end=evidence["drift"]["end"]),
    )
    return {
        "total_decisions": total,
        "scored_decisions": org["scored_decisions"],
        "unscored_decisions": org["unscored_decisions"],
        "coverage": org["coverage"],
        "automation_bias_incidents": counts["overtrust"],
        "automation_bias_rate": org["automation_bias_rate"],
        "followed_ai_errors": counts["followed_ai_errors"],
        "confidence_decisions": org["confidence_decisions"],
        "human_override_rate": org["override_rate"],
        "compliance_status": status,
        "compliance_status_reason": reason,
        "algorithm_aversion_incidents": counts["undertrust"],
        "reviewers": len(evidence["users"]),
        "trust_score": org["trust_score"],
        "attainable_score": org["attainable_score"],
        "reliance_gap": org["reliance_gap"],
        "reliance_skill": org["reliance_skill"],
        "overtrust_rate": org["overtrust_rate"],
        "overtrust_rate_ci": org["overtrust_rate_ci"],
        "overtrust_effective_n": org["overtrust_effective_n"],
        "category": org["category"],
        "discrimination": org["discrimination"],
        "discrimination_ci": org["discrimination_ci"],
        "confidence_check_verdict": evidence["confidence_check"]["verdict"],
        "confidence_recalibrated": org["confidence_recalibrated"],
        "open_high_or_critical_alerts": len(serious),
    }


def oversight_measures(evidence: Evidence) -> list[JSONObject]:
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
            "point": cite("eu.art14_4_a").removeprefix("Art. "),
            "obligation": "Understand the system's capacities and limitations; detect anomalies",
            "measured": (
                f"{printing.count(amp['total'])} amplification alert(s) raised up to the period's end, "
                f"{printing.count(handled)} triaged to resolution or false positive; "
                f"{printing.count(evidence['bias_alerts']['total'])} bias alert(s) in the period; the audit "
                f"chain verified {'valid' if chain['valid'] else 'INVALID'} when this report was generated "
                "(section 4)."
            ),
        },
        {
            "point": cite("eu.art14_4_b").removeprefix("Art. "),
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
            "point": cite("eu.art14_4_c").removeprefix("Art. "),
            "obligation": "Correctly interpret the output (interpretation aids)",
            "measured": (
                f"The AI's confidence is recorded with {printing.count(counts['with_confidence'])} of "
                f"{printing.count(total)} decisions "
                f"({printing.pct(_ratio(counts['with_confidence'], total), 'mean_ai_confidence')}); mean "
                f"confidence {printing.pct(org['mean_ai_confidence'], 'mean_ai_confidence')}."
            ),
        },
        {
            "point": cite("eu.art14_4_d").removeprefix("Art. "),
            "obligation": "Decide not to use, disregard, override or reverse the output",
            "measured": (
                f"{printing.count(counts['overridden'])} override(s), a rate of "
                f"{printing.pct(org['override_rate'], 'override_rate')}; by subgroup: "
                + ("; ".join(overrides_by_group) or "no subgroup data in the period")
                + "."
            ),
        },
        {
            "point": cite("eu.art14_4_e").removeprefix("Art. "),
            "obligation": "Intervene or interrupt the system (stop)",
            "measured": (
                "No interruption or stop event is recorded by this service for the period; "
                "record such events with the decisions to evidence this point."
            ),
        },
    ]


def sections(evidence: Evidence, log_preview: list[JSONObject]) -> JSONObject:
    summary = executive_summary(evidence)
    summary["oversight_measures"] = oversight_measures(evidence)
    summary["system_description"] = evidence["system_description"]
    org = dict(evidence["organisation"])
    return {
        "executive_summary": summary,
        "trust_calibration_analysis": {
            "window": evidence["window"],  # the exact instants [from, to) the figures cover
            "organisation": org,
            "confidence_check": evidence["confidence_check"],
            "thresholds": evidence["thresholds"],
            "confidence_bands": evidence["confidence_bands"],
            "trend": evidence["trend"],
            "users": evidence["users"],
            "risk_users": [u for u in evidence["users"] if u["at_risk"]],
            "review_effort": evidence["review_effort"],
            "vigilance": evidence["vigilance"],
            "drift_monitoring": drift_monitoring(evidence, "eu_ai_act"),
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
            "erasures": evidence["erasures"],
            "models": evidence["models"],
            "decision_log": log_preview,
        },
        "recommendations": recommendations.derive(evidence, summary, template="eu_ai_act"),
    }
