"""Recommendations derived from the figures: each names the figure that triggered it, its
value and the threshold it crossed, so an auditor can check it against the tables."""

from typing import Any

from calibration import rules
from compliance import printing

# Thresholds of the report (docs/reference/calibration.md and reports.md use the same numbers where they name one).
CONFIDENCE_SHOWN_MIN = 0.9
OUTCOMES_KNOWN_MIN = 0.2
RELIANCE_MIN = 0.5
OVERRIDE_GAP_MAX = 0.1
MIN_DECISIONS_FOR_RATES = 10

PRIORITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def _rec(priority: str, figure: str, value: Any, threshold: Any, text: str) -> dict[str, Any]:
    return {"priority": priority, "figure": figure, "value": value, "threshold": threshold, "text": text}


def _pct(value: float | None) -> str:
    return printing.pct(value)


def _override_gaps(subgroups: dict[str, Any]) -> list[tuple[str, str, float]]:
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


def derive(evidence: dict[str, Any], summary: dict[str, Any]) -> list[dict[str, Any]]:
    org = evidence["organisation"]
    counts = org["counts"]
    n = summary["total_decisions"]
    recs: list[dict[str, Any]] = []
    if not evidence["chain"]["valid"]:
        recs.append(
            _rec(
                "critical",
                "audit_trail.chain_verification.valid",
                False,
                True,
                "The audit chain failed verification at entry "
                f"{evidence['chain']['first_invalid_sequence']}: preserve the database as it is and "
                "investigate who changed the stored decisions before relying on this report.",
            )
        )
    if n == 0:
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
    over, ci = org["overtrust_rate"], org["overtrust_rate_ci"]
    if (
        summary["compliance_status"] == "NON_COMPLIANT"
        and over is not None
        and ci[0] > rules.thresholds().overtrust
    ):
        recs.append(
            _rec(
                "critical",
                "overtrust_rate",
                over,
                rules.thresholds().overtrust,
                f"Reviewers followed the AI in {_pct(over)} of the stake where it was more likely wrong (95 % "
                f"interval from {_pct(ci[0])}): review the OVERTRUSTING decisions ({printing.count(counts['overtrust'])}) "
                "with the reviewers concerned and require a written reason before a low-confidence AI "
                "recommendation is accepted.",
            )
        )
    if summary["compliance_status"] == "INSUFFICIENT_EVIDENCE":
        recs.append(
            _rec(
                "high",
                "coverage",
                org["coverage"],
                0.8,
                f"The evidence cannot show calibrated reliance: {summary['compliance_status_reason']} Log the AI's "
                "confidence with every decision and the outcomes as they become known.",
            )
        )
    for alert in evidence["amplification"]["unresolved_high_or_critical"]:
        recs.append(
            _rec(
                "critical" if alert["severity"] == "critical" else "high",
                "amplification_alerts.unresolved",
                alert["alert_id"],
                "resolved",
                f"Amplification alert {alert['alert_id']} ({alert['severity']}) is unresolved: triage it "
                "and record the cure action in its status history.",
            )
        )
    risky = [u for u in evidence["users"] if u["at_risk"]]
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
    over_users = [
        u for u in evidence["users"] if u["category"] in (rules.OVERTRUSTING, rules.NON_DISCRIMINATING)
    ]
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
    under = [u for u in evidence["users"] if u["category"] == "UNDERTRUSTING"]
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
    shown = counts["with_confidence"] / n
    if shown < CONFIDENCE_SHOWN_MIN:
        recs.append(
            _rec(
                "medium",
                "interpretation_aids.confidence_shown_rate",
                round(shown, 6),
                CONFIDENCE_SHOWN_MIN,
                f"Only {_pct(shown)} of decisions carry the AI's confidence: log and show it with every "
                "recommendation so reviewers can interpret the output (Art. 14(4)(c)).",
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
    for figure, label in (("rair", "relative AI reliance"), ("rsr", "relative self-reliance")):
        value = org.get(figure)
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
    for attribute, group, diff in _override_gaps(evidence["subgroups"])[:3]:
        recs.append(
            _rec(
                "high",
                f"subgroups.{attribute}.{group}.override_rate_difference",
                diff,
                OVERRIDE_GAP_MAX,
                f"Reviewers override the AI {abs(diff) * 100:.1f} points "
                f"{'more' if diff > 0 else 'less'} often for {attribute}={group} than for the reference "
                "group: check whether human review treats this group differently.",
            )
        )
    if not recs:
        recs.append(
            _rec(
                "low",
                "overtrust_rate",
                over,
                rules.thresholds().overtrust,
                f"No figure crossed its threshold (over-trust rate {_pct(over)}, 95 % interval up to "
                f"{_pct(ci[1])}): keep the current oversight and re-run this report next period.",
            )
        )
    return sorted(recs, key=lambda r: PRIORITY_ORDER[r["priority"]])
