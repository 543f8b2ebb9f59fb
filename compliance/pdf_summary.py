"""The finding in sentences, printed first in each PDF (docs/reference/reports.md)."""

import datetime as dt

from compliance import printing
from compliance.evidence import SERIOUS
from compliance.report import Report
from config.jsondoc import JSONObject


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
        reason = summary["compliance_status_reason"].rstrip(".")
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
        paragraphs.append(
            f"{printing.count(total)} AI-assisted decisions by {printing.count(len(sections_users(report)))} "
            f"reviewer(s) were analysed; {printing.count(org['scored_decisions'])} "
            f"({printing.pct(org['coverage'], 'coverage')}) carry the AI's confidence or a known outcome and are "
            "scored, the others enter no score or rate. In "
            f"{printing.count(counts['overtrust'])} scored decisions "
            f"({printing.pct(org['automation_bias_rate'], 'automation_bias_rate')}) the reviewer followed the AI "
            "where its own confidence was under 0.5, or, without a confidence, where it was wrong (automation "
            f"bias); in {printing.count(counts['undertrust'])} the reviewer overrode it where it was more likely "
            f"right (algorithm aversion). Reviewers overrode the AI in "
            f"{printing.pct(org['override_rate'], 'override_rate')} of decisions."
        )
        paragraphs.append(calibration_sentence(org))
    paragraphs.append(oversight_sentence(report))
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


def calibration_sentence(org: JSONObject) -> str:
    """The trust score against what was attainable, the over-trust rate with its interval, the
    category (docs/reference/calibration.md)."""
    ci = org["overtrust_rate_ci"]
    return (
        f"The organisation's trust score is {printing.score(org['trust_score'], 'trust_score')} of an attainable "
        f"{printing.score(org['attainable_score'], 'attainable_score')} (reliance gap "
        f"{printing.score(org['reliance_gap'], 'reliance_gap')}, reliance skill "
        f"{printing.score(org['reliance_skill'], 'reliance_skill')}; risk level {org['risk_level']}). Reviewers "
        f"followed the AI in {printing.pct(org['overtrust_rate'], 'overtrust_rate')} of the stake where it was "
        f"more likely wrong (95% interval {printing.pct(ci[0])} to {printing.pct(ci[1])}, effective "
        f"{org['overtrust_effective_n']:.1f} decisions) and overrode it in "
        f"{printing.pct(org['undertrust_rate'], 'undertrust_rate')} of the stake where it was more likely right: "
        f"category {org['category']} (Appendix B)."
    )


def sections_users(report: Report) -> list[JSONObject]:
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


def _then_now(name: str, then: float | None, now: float | None, kind: str) -> str:
    """A figure of the previous period beside this one's, both printed, then the change."""
    shown = printing.pct if kind == "rate" else printing.score
    key = {"automation-bias rate": "automation_bias_rate", "override rate": "override_rate"}.get(
        name, name.replace(" ", "_").replace("-", "")
    )
    text = f"{name} {shown(then, key)} then and {shown(now, key)} now"
    if then is None or now is None:
        return text
    change = printing.points(now - then) if kind == "rate" else f"{now - then:+.2f}"
    return f"{text} ({change})"


def change_sentence(report: Report, total: int, counts: dict[str, int], org: JSONObject) -> str:
    """The previous period of the same length beside this one: each figure's two values and the
    change, never a change alone (a fall of one rate can hide the rise of another)."""
    previous = report.data["summary"].get("previous_period")
    if not previous:
        return (
            "The period of the same length before this one holds no decision, so no change since a "
            "previous period is reported."
        )
    figures = [
        _then_now(
            "automation-bias rate", previous["automation_bias_rate"], org["automation_bias_rate"], "rate"
        ),
        _then_now("override rate", previous["human_override_rate"], org["override_rate"], "rate"),
    ]
    if "overtrust_rate" in previous:
        figures.append(
            _then_now("over-trust rate", previous["overtrust_rate"], org["overtrust_rate"], "rate")
        )
    figures.append(
        _then_now("trust score", previous["trust_score"], org["trust_score"], "score")
        + f" against an attainable score of {printing.score(previous['attainable_score'], 'attainable_score')} "
        f"then and {printing.score(org['attainable_score'], 'attainable_score')} now"
    )
    return (
        f"In the previous period of the same length ({printing.when(previous['from'])[:10]} to "
        f"{day_before(previous['to'])}), {printing.count(previous['total_decisions'])} decisions were "
        f"analysed: {'; '.join(figures)}."
    )


def day_before(instant: str) -> str:
    """The last whole UTC day before an exclusive period end."""
    end = dt.datetime.fromisoformat(instant.replace("Z", "+00:00")) - dt.timedelta(microseconds=1)
    return end.astimezone(dt.UTC).date().isoformat()


def oversight_sentence(report: Report) -> str:
    """Review effort and vigilance in a sentence: the team's figures, naming no one."""
    sections = report.data["sections"]
    where = sections[
        "trust_calibration_analysis" if report.template == "eu_ai_act" else "disclosure_and_human_review"
    ]
    team = (where.get("review_effort") or {}).get("team") or {}
    totals = (where.get("vigilance") or {}).get("totals") or {}
    if team.get("timed_decisions"):
        effort = (
            f"Review effort: {printing.count(team['timed_decisions'])} of {printing.count(team['decisions'])} "
            f"decisions record how long their reviewer looked, and {printing.count(team['flagged_reviewers'])} "
            "reviewer(s) are flagged for quick agreement with the AI."
        )
    else:
        effort = (
            "Review effort is not measured: no decision of the period records how long its reviewer looked."
        )
    if totals.get("known_wrong"):
        vigilance = (
            f"Vigilance: reviewers caught {printing.count(totals['caught'])} of "
            f"{printing.count(totals['known_wrong'])} probes with a known-wrong AI recommendation "
            f"({printing.pct(totals['catch_rate'])})."
        )
    else:
        vigilance = "Vigilance is not measured: no probe with a known-wrong AI recommendation was logged."
    return f"{effort} {vigilance}"
