"""Recommendations derived from the figures: each names the figure that triggered it, its
value and the threshold it crossed, so an auditor can check it against the tables."""

from collections.abc import Sequence

from audit.measures import Figures
from calibration import rules
from calibration.documents import OrganisationFigures, UserRow
from compliance import citations, drift_report, printing
from compliance.documents import Evidence, Subgroups
from config.jsondoc import JSONObject

# Thresholds of the report (docs/reference/calibration.md and reports.md use the same numbers where they name one).
CONFIDENCE_SHOWN_MIN = 0.9
OUTCOMES_KNOWN_MIN = 0.2
RELIANCE_MIN = 0.5
OVERRIDE_GAP_MAX = 0.1
MIN_DECISIONS_FOR_RATES = 10
# The evidence the EU report's COMPLIANT status needs (compliance/eu_ai_act.py): scored decisions,
# the share of decisions with a confidence or an outcome, the over-trust rate's effective n.
SCORED_MIN = 100
COVERAGE_MIN = 0.80
OVERTRUST_N_MIN = 10

PRIORITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def _rec(priority: str, figure: str, value: object, threshold: object, text: str) -> JSONObject:
    return {"priority": priority, "figure": figure, "value": value, "threshold": threshold, "text": text}


def _pct(value: float | None) -> str:
    return printing.pct(value)


def _override_gaps(subgroups: Subgroups) -> list[tuple[str, str, float]]:
    """(attribute, group, override-rate difference to the reference) beyond the limit."""
    out = []
    for attribute, data in subgroups.get("attributes", {}).items():
        for group in data["groups"]:
            diff = (group.get("disparity") or {}).get("override_rate_difference")
            if (
                diff is not None
                and abs(diff) > OVERRIDE_GAP_MAX
                and group["decisions"] >= MIN_DECISIONS_FOR_RATES
            ):
                out.append((attribute, group["group"], diff))
    return sorted(out, key=lambda item: -abs(item[2]))


def derive(evidence: Evidence, summary: JSONObject, *, template: str) -> list[JSONObject]:
    """The recommendations of a report of `template`: the Texas report borrows the EU report's
    over-trust threshold as a figure to act on, never as a limit it applies (compliance/citations.py)."""
    recs = _chain(evidence["chain"])
    if summary["total_decisions"] == 0:
        recs.append(
            _rec(
                "high",
                "total_decisions",
                0,
                1,
                "No decision matches the period and filters, so the report holds no evidence of "
                "human oversight: check that the deciding systems log every AI-assisted decision.",
            )
        )
        return recs
    org = evidence["organisation"]
    recs.extend(overtrust(org, summary, template))
    if summary["compliance_status"] == "INSUFFICIENT_EVIDENCE":
        recs.extend(insufficient_evidence(org))
    recs.extend(oversight_findings(evidence))
    drift = evidence["drift"]
    section = drift_report.section(
        drift["rows"],
        start=drift["start"],
        end=drift["end"],
        template=template,
        per_person=drift["per_person"],
    )
    recs.extend(drift_report.recommendations(section))
    recs.extend(serious_bias_alerts(evidence["bias_alerts"]))
    recs.extend(_unresolved_amplification(evidence["amplification"]))
    recs.extend(_reviewers(evidence["users"]))
    recs.extend(_logging_gaps(org, summary["total_decisions"], template))
    recs.extend(_reliance(org))
    recs.extend(_override_gap_recs(evidence["subgroups"]))
    if not recs:
        over, ci = org["overtrust_rate"], org["overtrust_rate_ci"]
        recs.append(
            _rec(
                "low",
                "overtrust_rate",
                over,
                rules.thresholds().overtrust,
                f"No figure crossed its threshold (over-trust rate {_pct(over)}, 95% interval up to "
                f"{_pct(ci[1])}): keep the current oversight and re-run this report next period.",
            )
        )
    return sorted(recs, key=lambda r: PRIORITY_ORDER[r["priority"]])


def _chain(chain: JSONObject) -> list[JSONObject]:
    if chain["valid"]:
        return []
    return [
        _rec(
            "critical",
            "audit_trail.chain_verification.valid",
            False,
            True,
            "The audit chain failed verification at entry "
            f"{chain['first_invalid_sequence']}: preserve the database as it is and "
            "investigate who changed the stored decisions before relying on this report.",
        )
    ]


def _unresolved_amplification(amplification: JSONObject) -> list[JSONObject]:
    return [
        _rec(
            "critical" if alert["severity"] == "critical" else "high",
            "amplification_alerts.unresolved",
            alert["alert_id"],
            "resolved",
            f"Amplification alert {alert['alert_id']} ({alert['severity']}) is unresolved: triage it "
            "and record the cure action in its status history.",
        )
        for alert in amplification["unresolved_high_or_critical"]
    ]


def _reviewers(users: Sequence[UserRow]) -> list[JSONObject]:
    """Reviewers at risk, over-trusting (or not discriminating) and under-trusting."""
    recs = []
    risky = [u for u in users if u["at_risk"]]
    if risky:
        names = ", ".join(u["user_id"] for u in risky)
        recs.append(
            _rec(
                "high",
                "users.reliance_gap",
                max(u["reliance_gap"] or 0.0 for u in risky),
                rules.thresholds().risk_high_gap,
                f"{len(risky)} reviewer(s) are at risk (a reliance gap of {rules.thresholds().risk_high_gap:.2f} or more, "
                f"or a flagged category, over at least {rules.risk_min_decisions()} scored decisions: {names}): give "
                "them calibration training and a second review of their recent decisions.",
            )
        )
    over_users = [u for u in users if u["category"] in (rules.OVERTRUSTING, rules.NON_DISCRIMINATING)]
    if over_users:
        recs.append(
            _rec(
                "medium",
                "users.category",
                len(over_users),
                0,
                f"{len(over_users)} reviewer(s) follow the AI where it is more likely wrong (OVERTRUSTING or "
                "NON_DISCRIMINATING): show them the AI's confidence and its error rate in their queue.",
            )
        )
    under = [u for u in users if u["category"] == "UNDERTRUSTING"]
    if under:
        recs.append(
            _rec(
                "medium",
                "users.category",
                len(under),
                0,
                f"{len(under)} reviewer(s) override the AI more than its record warrants (calibration "
                "gap under -0.15): share the AI's measured accuracy with them.",
            )
        )
    return recs


def _logging_gaps(org: OrganisationFigures, n: int, template: str) -> list[JSONObject]:
    """Too few decisions carry the AI's confidence, or a known outcome."""
    recs = []
    counts = org["counts"]
    shown = counts["with_confidence"] / n
    if shown < CONFIDENCE_SHOWN_MIN:
        recs.append(
            _rec(
                "medium",
                "interpretation_aids.confidence_shown_rate",
                round(shown, 6),
                CONFIDENCE_SHOWN_MIN,
                f"Only {_pct(shown)} of decisions carry the AI's confidence: log and show it with every "
                "recommendation so reviewers can interpret the output"
                + (f" ({citations.cite('eu.art14_4_c')})." if template == citations.EU_AI_ACT else "."),
            )
        )
    known = counts["with_outcome"] / n
    if known < OUTCOMES_KNOWN_MIN:
        recs.append(
            _rec(
                "low",
                "outcomes_known_rate",
                round(known, 6),
                OUTCOMES_KNOWN_MIN,
                f"Outcomes are known for {_pct(known)} of decisions: report outcomes as they become "
                "known so over- and under-reliance are measured on facts, not on confidence alone.",
            )
        )
    return recs


def _reliance(org: Figures) -> list[JSONObject]:
    recs = []
    for figure, label, value in (
        ("rair", "relative AI reliance", org["rair"]),
        ("rsr", "relative self-reliance", org["rsr"]),
    ):
        if value is not None and value < RELIANCE_MIN:
            recs.append(
                _rec(
                    "medium",
                    f"trust_calibration.{figure}",
                    value,
                    RELIANCE_MIN,
                    f"The {label} ({figure.upper()}) is {_pct(value)}, under {_pct(RELIANCE_MIN)}: "
                    + (
                        "reviewers keep their own wrong answer when the AI is right."
                        if figure == "rair"
                        else "reviewers switch to the AI's answer when it is wrong and they were right."
                    ),
                )
            )
    return recs


def _override_gap_recs(subgroups: Subgroups) -> list[JSONObject]:
    return [
        _rec(
            "high",
            f"subgroups.{attribute}.{group}.override_rate_difference",
            diff,
            OVERRIDE_GAP_MAX,
            f"Reviewers override the AI {abs(diff) * 100:.1f} points "
            f"{'more' if diff > 0 else 'less'} often for {attribute}={group} than for the reference "
            "group: check whether human review treats this group differently.",
        )
        for attribute, group, diff in _override_gaps(subgroups)[:3]
    ]


def insufficient_evidence(org: Figures) -> list[JSONObject]:
    """One recommendation for each reason the evidence cannot show calibrated reliance (the
    conditions of INSUFFICIENT_EVIDENCE, docs/reference/reports.md), each with what would lift it."""
    th = rules.thresholds()
    ci_high = org["overtrust_rate_ci"][1]
    reasons = [
        (
            org["scored_decisions"] < SCORED_MIN,
            ("scored_decisions", org["scored_decisions"], SCORED_MIN),
            f"Only {printing.count(org['scored_decisions'])} decision(s) carry a confidence or an outcome, under "
            f"the {printing.count(SCORED_MIN)} needed: log the AI's confidence with every decision.",
        ),
        (
            (org["coverage"] or 0.0) < COVERAGE_MIN,
            ("coverage", org["coverage"], COVERAGE_MIN),
            f"Only {_pct(org['coverage'])} of decisions carry a confidence or an outcome, under "
            f"{_pct(COVERAGE_MIN)}: log the confidence with every decision and the outcomes as they become known.",
        ),
        (
            org["overtrust_effective_n"] < OVERTRUST_N_MIN,
            ("overtrust_effective_n", org["overtrust_effective_n"], OVERTRUST_N_MIN),
            f"The over-trust rate rests on an effective {org['overtrust_effective_n']:.1f} decisions where the AI "
            f"was more likely wrong, under {OVERTRUST_N_MIN}: record outcomes, or report over a longer period.",
        ),
        (
            ci_high is not None and ci_high >= th.overtrust,
            ("overtrust_rate_ci", ci_high, th.overtrust),
            f"The over-trust rate's 95% interval reaches {_pct(ci_high)}, so a rate of {_pct(th.overtrust)} "
            "cannot be ruled out: more scored decisions (confidences, outcomes) narrow it.",
        ),
    ]
    return [_rec("high", *figure, text) for holds, figure, text in reasons if holds]


def oversight_findings(evidence: Evidence) -> list[JSONObject]:
    """Flagged rubber-stampers (review effort) and known-wrong probes that were followed (vigilance)."""
    recs = []
    effort = evidence.get("review_effort") or {}
    flagged = [u["user_id"] for u in effort.get("reviewers", []) if u["flagged"]]
    count = len(flagged) if "reviewers" in effort else (effort.get("team") or {}).get("flagged_reviewers", 0)
    if count:
        who = (
            f": {', '.join(flagged)}" if flagged else " (the rows per reviewer are withheld from this report)"
        )
        recs.append(
            _rec(
                "high",
                "review_effort.flagged_reviewers",
                count,
                0,
                f"{printing.count(count)} reviewer(s) are flagged for quick agreement with the AI{who}: look at "
                "their quick agreements with them and give each decision the review time its case needs.",
            )
        )
    vigilance = evidence.get("vigilance") or {}
    totals = vigilance.get("totals") or {}
    missed = (totals.get("known_wrong") or 0) - (totals.get("caught") or 0)
    if missed > 0:
        names = [u["user_id"] for u in vigilance.get("reviewers", []) if u["known_wrong"] > u["caught"]]
        who = f" (by {', '.join(names)})" if names else ""
        recs.append(
            _rec(
                "high",
                "vigilance.missed_probes",
                missed,
                0,
                f"{printing.count(missed)} of {printing.count(totals['known_wrong'])} probes with a known-wrong AI "
                f"recommendation were followed{who}: go through each missed probe with its reviewer and keep "
                "probing until they catch them.",
            )
        )
    return recs


def serious_bias_alerts(bias: JSONObject) -> list[JSONObject]:
    """Bias alerts of the period at high or critical severity (they have no triage state)."""
    recs = []
    for severity in ("critical", "high"):
        ids = [a["alert_id"] for a in bias.get("items", []) if a["severity"] == severity]
        if ids:
            recs.append(
                _rec(
                    severity,
                    "bias_alerts.by_severity",
                    len(ids),
                    0,
                    f"{printing.count(len(ids))} {severity} bias alert(s) were raised in the period "
                    f"({printing.enumeration(ids)}): investigate the groups each compares and record what "
                    "was found and done.",
                )
            )
    return recs


def overtrust(org: OrganisationFigures, summary: JSONObject, template: str) -> list[JSONObject]:
    """The organisation's over-trust flagged (the EU report's NON_COMPLIANT rule); the Texas
    report names the threshold as the EU report's, at a lower priority."""
    over, ci, counts = org["overtrust_rate"], org["overtrust_rate_ci"], org["counts"]
    recs: list[JSONObject] = []
    if (
        summary["compliance_status"] == "NON_COMPLIANT"
        and over is not None
        and ci[0] > rules.thresholds().overtrust
    ):
        eu = template == citations.EU_AI_ACT
        borrowed = (
            ""
            if eu
            else f", above the over-trust rate of {_pct(rules.thresholds().overtrust)} that this service's report "
            "under the EU AI Act holds against oversight (the Texas Act sets no numeric threshold)"
        )
        recs.append(
            _rec(
                "critical" if eu else "high",
                "overtrust_rate",
                over,
                rules.thresholds().overtrust,
                f"Reviewers followed the AI in {_pct(over)} of the stake where it was more likely wrong (95% "
                f"interval from {_pct(ci[0])}){borrowed}: review the OVERTRUSTING decisions "
                f"({printing.count(counts['overtrust'])}) with the reviewers concerned and require a written "
                "reason before a low-confidence AI recommendation is accepted.",
            )
        )
    return recs
