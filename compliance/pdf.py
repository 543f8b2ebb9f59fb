"""The PDF format: the report data laid out as a document an auditor files (docs/reference/
reports.md). A title page, a table of contents with page numbers, the finding in sentences,
every section with its tables and charts, every alert of the period with its status history,
and appendices: the decision log (first PDF_LOG_ROWS rows, landscape), the glossary, how to
verify the report, and an attestation block for signatures. Rendered by the HTML template
templates/compliance/report.html with WeasyPrint as PDF/A-3b; when the log has more rows than
are printed, the whole log is embedded as decision-log.csv, an associated file of the document.

Every value goes through compliance/printing.py, so no program representation of a value (None,
nan, a dict or a list) reaches the page."""

import base64
import datetime as dt
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.template import TemplateDoesNotExist
from django.template.loader import get_template, render_to_string
from django.utils.safestring import mark_safe
from weasyprint import HTML, Attachment
from weasyprint.urls import URLFetcher, URLFetchingError

from compliance import charts, oversight_print, printing
from compliance.catalogue import template_info
from compliance.evidence import SERIOUS
from compliance.glossary import GLOSSARY
from compliance.report import LOG_SECTION, HashingWriter, Report, write_decision_log_csv

PDF_VARIANT = "pdf/a-3b"
PDF_LOG_ROWS = 200  # decision-log rows printed; beyond, the whole log is embedded as CSV
NOWRAP_CELL = 16  # a table cell this short never wraps (identifiers, figures, enumerations)
# How many characters of table text fit across the page (DejaVu Sans digits are 0.64 em wide; the
# widest text is assumed): portrait tables at 7.3 pt, the landscape decision log at 6.3 pt.
TABLE_CHARS = 108
LOG_CHARS = 185
TABLE_ROWS_MAX = 200
# Columns printed for the tables that have more than fit a page (the json holds all).
TABLE_COLUMNS = {
    "users": [
        "user_id",
        "decisions",
        "trust_score",
        "category",
        "agreement_rate",
        "overtrust_rate",
        "undertrust_rate",
        "calibration_gap",
        "rair",
        "rsr",
    ],
    "risk_users": ["user_id", "decisions", "trust_score", "category", "overtrust_rate", "undertrust_rate"],
    "groups": [
        "group",
        "decisions",
        "ai_favorable_rate",
        "favorable_rate",
        "override_rate",
        "accuracy",
        "disparity.favorable_rate_difference",
        "disparity.disparate_impact_ratio",
        "disparity.override_rate_difference",
    ],
    "oversight_measures": ["point", "obligation", "measured"],
    "points": [
        "period_start",
        "decisions",
        "trust_score",
        "agreement_rate",
        "overtrust_count",
        "undertrust_count",
    ],
}
LOG_COLUMNS = [
    ("decision_id", "Decision ID"),
    ("timestamp", "Time (UTC)"),
    ("user_id", "Reviewer"),
    ("model_id", "Model"),
    ("ai_recommendation", "AI recommendation"),
    ("ai_confidence", "AI confidence"),
    ("user_decision", "Reviewer decision"),
    ("followed_ai", "Followed AI"),
    ("calibration_category", "Category"),
    ("outcome", "Outcome"),
    ("context", "Context"),
]
NOWRAP_LOG_COLUMNS = {"decision_id", "timestamp", "ai_confidence", "followed_ai", "calibration_category"}
LABELS = {
    "ai_favorable_rate": "AI favourable rate",
    "favorable_rate": "Human favourable rate",
    "favorable_rate_difference": "Favourable rate difference",
    "disparate_impact_ratio": "Disparate impact ratio",
    "override_rate_difference": "Override rate difference",
    "period_start": "Period start",
    "overtrust_rate": "Over-trust rate",
    "undertrust_rate": "Under-trust rate",
    "overtrust_count": "Over-trust",
    "undertrust_count": "Under-trust",
    "overreliance_rate": "Over-reliance",
    "underreliance_rate": "Under-reliance",
    "rair": "RAIR",
    "rsr": "RSR",
    "user_id": "Reviewer",
    "mean_ai_confidence": "Mean AI confidence",
    "ai_accuracy": "AI accuracy",
    "entries_checked": "Entries checked",
    "head_hash": "Head hash",
    "nist_ai_rmf_alignment": "NIST AI RMF alignment",
    "points": "Trust score per period",
    "slope": "Slope per period",
    "by_status": "Alerts by status",
    "by_severity": "Alerts by severity",
    "alerts_by_status": "Amplification alerts by status",
    "unresolved_high_or_critical": "Unresolved high or critical alerts",
    "in_period": "Created or changed in the period",
    "chain_verification": "Audit chain verification",
    "first_invalid_sequence": "First invalid entry",
}
# Keys printed elsewhere in the document (the log in its appendix, the summary in sentences).
MOVED = {"decision_log", "compliance_status_reason", "status_history"}
CHART_SECTIONS = {
    "eu_ai_act": {"trust_calibration_analysis": "trend", "bias_detection_summary": "subgroups"},
    "texas_traiga": {"monitoring_and_safeguards": "trend", "discrimination_screening": "subgroups"},
}
# Where the figures of review effort, vigilance and signed checkpoints print, with the Article
# 14(4) point each evidences, and why they are absent until their feature adds them.
FEATURE_SECTIONS = {
    "eu_ai_act": {
        "trust_calibration_analysis": ("review_effort", "vigilance"),
        "audit_trail": ("checkpoint",),
    },
    "texas_traiga": {
        "disclosure_and_human_review": ("review_effort", "vigilance"),
        "monitoring_and_safeguards": ("checkpoint",),
    },
}
FEATURES = {
    "review_effort": (
        "Review effort",
        "Art. 14(4)(b): oversight that takes no time is not oversight (quick agreement with the AI).",
        "no decision of the period records how long its reviewer looked at it",
    ),
    "vigilance": (
        "Vigilance probes",
        "Art. 14(4)(a) and (b): known cases that test whether reviewers catch a wrong AI recommendation.",
        "no vigilance probe was logged in the period",
    ),
    "checkpoint": (
        "Latest signed checkpoint",
        "Art. 14(4)(a) and Art. 12 record-keeping: a signed commitment to the audit trail that the "
        "operator cannot take back.",
        "no signed checkpoint of the audit chain exists at the report's generation",
    ),
}
ALERT_STATUS_ORDER = ("open", "acknowledged", "resolved", "false_positive")
# Partials that take their figures already printed (compliance/oversight_print.py).
PRINTERS = {"review_effort": oversight_print.review_effort, "vigilance": oversight_print.vigilance}


class _NoNetworkFetcher(URLFetcher):
    """The report embeds everything (charts as data: URLs); nothing else is fetched."""

    def fetch(self, url: str, headers: Any = None) -> Any:
        if not url.startswith("data:"):
            raise URLFetchingError(f"refused to fetch {url[:40]}")
        return super().fetch(url, headers)


def _label(key: str) -> str:
    if key in LABELS:
        return LABELS[key]
    text = key.replace("_", " ")
    for short in ("ai", "id", "nist", "rmf", "eu"):
        text = " ".join(w.upper() if w == short else w for w in text.split(" "))
    return text[:1].upper() + text[1:]


def _get(row: dict[str, Any], column: str) -> Any:
    value: Any = row
    for part in column.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _table(key: str, rows: list[dict[str, Any]], title: str) -> dict[str, Any]:
    scalar = [k for k, v in rows[0].items() if not isinstance(v, dict | list)]
    columns = TABLE_COLUMNS.get(key) or scalar[:8]
    shown = rows[:TABLE_ROWS_MAX]
    absent: dict[str, str] = {}  # a column's "not measured" cells, explained once under the table
    cells = []
    for row in shown:
        printed = []
        for column in columns:
            name = column.split(".")[-1]
            value = _get(row, column)
            if value is None and name not in printing.ABSENT_WORDS:
                absent[_label(name)] = (
                    printing.not_measured(name).removeprefix(printing.NOT_MEASURED).strip(" ()")
                )
                printed.append(printing.NOT_MEASURED)
            else:
                printed.append(printing.figure(name, value))
        cells.append(printed)
    notes = [f"{label} not measured where shown: {reason}." for label, reason in absent.items()]
    if len(rows) > len(shown):
        notes.append(
            f"The first {printing.count(len(shown))} of {printing.count(len(rows))} rows; the json "
            "export holds all of them."
        )
    labels = [_label(c.split(".")[-1]) for c in columns]
    return {
        "kind": "table",
        "title": title,
        "columns": labels,
        "rows": cells,
        "widths": _widths(labels, cells),
        "note": " ".join(notes),
    }


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, dict | list) for v in value)


def _is_counts(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(v, int) for v in value.values())


def _history_rows(history: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            printing.when(change.get("at")),
            printing.figure("by", change.get("by")),
            (change.get("from") or "(new)").replace("_", " "),
            str(change.get("to") or "").replace("_", " "),
            printing.figure("notes", change.get("notes")),
        ]
        for change in history
    ]


def _widths(
    columns: list[str], rows: list[list[str]], nowrap: list[bool] | None = None, capacity: int = TABLE_CHARS
) -> list[float] | None:
    """Column widths (percent) that fit the content, so the table can use the fixed layout (a
    single pass; the automatic one measures every cell twice): each column at least its longest
    unbreakable piece (the whole cell when it does not wrap), the rest shared by typical length.
    None when the longest pieces alone would not fit: the automatic layout decides then."""
    floors, wants = [], []
    for i, header in enumerate(columns):
        cells = [row[i] for row in rows]
        pieces = [
            len(cell)
            if (nowrap and nowrap[i]) or len(cell) <= NOWRAP_CELL
            else max(map(len, cell.split()), default=0)
            for cell in cells
        ]
        floor = max([*pieces, *map(len, header.split())], default=1) + 2
        typical = sorted(len(cell) for cell in cells)[len(cells) // 2] if cells else 0
        floors.append(floor)
        wants.append(max(floor, min(typical, 60)))
    if sum(floors) > capacity:
        return None
    spare = capacity - sum(floors)
    extra = [w - f for w, f in zip(wants, floors, strict=True)]
    share = [spare * e / sum(extra) if sum(extra) else spare / len(floors) for e in extra]
    total = sum(floors) + sum(share)
    return [round(100 * (f + x) / total, 2) for f, x in zip(floors, share, strict=True)]


def _alert_entry(item: dict[str, Any]) -> dict[str, Any]:
    if "amplification_score" in item:
        kind = "Amplification alert"
        facts = [
            ("Model", item.get("model_id") or "all models"),
            ("Protected attribute", printing.figure("protected_attribute", item.get("protected_attribute"))),
            ("Amplification score", printing.score(item.get("amplification_score"), "amplification_score")),
            ("Direction", printing.figure("direction", item.get("direction"))),
            ("Fairness tool", printing.figure("external_tool", item.get("external_tool"))),
            ("Status now", str(item.get("status", "")).replace("_", " ")),
        ]
    else:
        kind = "Bias alert"
        facts = [
            ("Model", item.get("model_id") or "all models"),
            ("Decision", str(item.get("decision_id"))),
            ("Bias types", printing.enumeration([t.replace("_", " ") for t in item.get("bias_types") or []])),
            ("Attributes", printing.enumeration(item.get("attributes") or [])),
            ("Status", "raised (bias alerts have no triage state)"),
        ]
    return {
        "title": f"{kind} {item['alert_id']}",
        "severity": item.get("severity", ""),
        "created": printing.when(item.get("created_at")),
        "facts": facts,
        "history": _history_rows(item.get("status_history") or []),
    }


def _alerts_block(title: str, items: list[dict[str, Any]], intro: str) -> dict[str, Any]:
    return {"kind": "alerts", "title": title, "intro": intro, "alerts": [_alert_entry(i) for i in items]}


def _amplification_blocks(value: dict[str, Any], *, list_alerts: bool) -> Iterable[dict[str, Any]]:
    items = value.get("items") or [] if list_alerts else []
    unresolved = value.get("unresolved_high_or_critical") or []
    intro = (
        f"{printing.count(value.get('in_period', len(items)))} amplification alert(s) were created or "
        f"changed in the period. Up to the period's end {printing.count(value.get('total', 0))} were "
        f"raised: {printing.by_key(value.get('by_status', {}), ALERT_STATUS_ORDER)} (by severity: "
        f"{printing.by_key(value.get('by_severity', {}), ('critical', 'high', 'medium', 'low'))}). "
        + (
            f"{printing.count(len(unresolved))} high or critical alert(s) are still open or acknowledged: "
            + printing.enumeration([a["alert_id"] for a in unresolved])
            + "."
            if unresolved
            else "No high or critical alert is open."
        )
    )
    if not list_alerts:
        intro += " Each alert is listed with its status history under Incidents and cure actions."
    yield _alerts_block("Amplification alerts and their status history", items, intro)


def _bias_blocks(value: dict[str, Any], *, list_alerts: bool) -> Iterable[dict[str, Any]]:
    items = value.get("items") or [] if list_alerts else []
    intro = (
        f"{printing.count(value.get('total', 0))} bias alert(s) were raised in the period (by severity: "
        f"{printing.by_key(value.get('by_severity', {}), ('critical', 'high', 'medium', 'low'))})."
    )
    yield _alerts_block("Bias alerts", items, intro)


def _feature_block(key: str, value: Any) -> Iterable[dict[str, Any]]:
    title, point, absent = FEATURES[key]
    yield {"kind": "heading", "text": title, "depth": 1}
    yield {"kind": "paragraph", "text": point, "note": True}
    if value is None:
        yield {"kind": "paragraph", "text": f"{printing.NOT_MEASURED.capitalize()}: {absent}."}
        return
    partial = f"compliance/_{key}.html"
    try:
        get_template(partial)
    except TemplateDoesNotExist:
        yield from _blocks(value if isinstance(value, dict) else {key: value}, depth=1)
        return
    shown = dict(value) if isinstance(value, dict) else value
    if isinstance(shown, dict) and shown.get("created_at"):
        shown["created_at"] = printing.when(shown["created_at"])
    printer = PRINTERS.get(key)
    figures = printer(value) if printer is not None else None
    yield {"kind": "partial", "template": partial, "value": shown, "figures": figures}


def _blocks(value: dict[str, Any], *, depth: int = 0, list_alerts: bool = True) -> Iterable[dict[str, Any]]:
    facts = [
        (_label(k), printing.figure(k, v))
        for k, v in value.items()
        if k not in MOVED and k not in FEATURES and (not isinstance(v, dict | list) or _is_scalar_list(v))
    ]
    facts += [(_label(k), printing.by_key(v)) for k, v in value.items() if _is_counts(v)]
    if facts:
        yield {"kind": "facts", "rows": facts}
    for key, item in value.items():
        if key in MOVED or key in FEATURES or _is_counts(item):
            continue
        if key == "amplification_alerts" and isinstance(item, dict):
            yield from _amplification_blocks(item, list_alerts=list_alerts)
        elif key == "bias_alerts" and isinstance(item, dict):
            yield from _bias_blocks(item, list_alerts=list_alerts)
        elif key in ("amplification_alerts", "bias_alerts") and isinstance(item, list):
            title = "Amplification alerts" if key == "amplification_alerts" else "Bias alerts"
            intro = f"{printing.count(len(item))} {title.lower()} with their status history." if item else ""
            yield _alerts_block(
                f"{title}: incidents and the actions taken", item, intro or f"No {title.lower()}."
            )
        elif isinstance(item, list) and item and isinstance(item[0], dict):
            yield _table(key, item, _label(key))
        elif isinstance(item, list) and not item and not _is_scalar_list(item):
            continue
        elif isinstance(item, dict) and key == "attributes":
            if not item:
                yield {"kind": "paragraph", "text": "No subgroup attribute was recorded in the period."}
            for name, attribute in item.items():
                title = f"Attribute {name} (reference group {attribute['reference_group']})"
                yield _table("groups", attribute["groups"], title)
        elif isinstance(item, dict) and item:
            title = "Direction of the trend" if key == "trend" and depth else _label(key)
            yield {"kind": "heading", "text": title, "depth": depth + 1}
            yield from _blocks(item, depth=depth + 1)


def _recommendation_rows(recommendations: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for rec in recommendations:
        key = str(rec["figure"]).split(".")[-1]
        value, threshold = rec["value"], rec["threshold"]
        if isinstance(value, str) or key == "category":  # an alert to triage, or a count of reviewers
            measured = printing.figure(key, value)
        else:
            measured = f"{printing.figure(key, value)} (threshold {printing.figure(key, threshold)})"
        rows.append([rec["priority"], rec["text"], measured])
    return {
        "kind": "table",
        "title": "Recommendations, most urgent first",
        "columns": ["Priority", "Recommendation", "Figure and threshold"],
        "rows": rows,
        "widths": [10, 62, 28],
        "note": "",
    }


def _svg_uri(svg: str | None) -> str | None:
    return None if svg is None else "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _charts(report: Report) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for section_id, kind in CHART_SECTIONS[report.template].items():
        section = report.data["sections"][section_id]
        if kind == "trend":
            out[section_id] = {
                "uri": _svg_uri(charts.trust_trend(section["trend"])),
                "caption": "Trust score per period (line, left axis) and decisions (bars, right axis).",
            }
        else:
            uri = _svg_uri(charts.subgroups(section["subgroups"]["attributes"]))
            caption = "Favourable rate per subgroup: the AI's recommendations against the human decisions."
            out[section_id] = {"uri": uri, "caption": caption}
    return out


def _summary(report: Report) -> list[str]:
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
    alert_sentence = _alert_sentence(report, SERIOUS)
    if alert_sentence:
        paragraphs.append(alert_sentence)
    chain = (sections["audit_trail"] if eu else sections["monitoring_and_safeguards"])["chain_verification"]
    paragraphs.append(
        f"The audit chain verified {'valid' if chain['valid'] else 'INVALID'} over "
        f"{printing.count(chain['entries_checked'])} entries at {printing.when(chain.get('verified_at'))}"
        + ("." if chain["valid"] else f"; the first invalid entry is {chain.get('first_invalid_sequence')}.")
    )
    paragraphs.append(_change_sentence(report, total, counts, org))
    return paragraphs


def sections_users(report: Report) -> list[dict[str, Any]]:
    sections = report.data["sections"]
    if report.template == "eu_ai_act":
        return list(sections["trust_calibration_analysis"]["users"])
    return list(sections["monitoring_and_safeguards"]["users"])


def _alert_sentence(report: Report, serious: tuple[str, ...]) -> str:
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


def _change_sentence(report: Report, total: int, counts: dict[str, int], org: dict[str, Any]) -> str:
    previous = report.data["summary"].get("previous_period")
    if not previous:
        return (
            "The period of the same length before this one holds no decision, so no change since a "
            "previous period is reported."
        )
    now_rate = counts["overtrust"] / total if total else None
    parts = [
        f"In the previous period of the same length ({printing.when(previous['from'])[:10]} to "
        f"{_day_before(previous['to'])}), "
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


def _day_before(instant: str) -> str:
    """The last whole UTC day before an exclusive period end."""
    end = dt.datetime.fromisoformat(instant.replace("Z", "+00:00")) - dt.timedelta(microseconds=1)
    return end.astimezone(dt.UTC).date().isoformat()


def _title_rows(report: Report) -> list[tuple[str, str, bool]]:
    data = report.data
    period = data["time_period"]
    filters = "; ".join(f"{_label(k)}: {printing.enumeration(v)}" for k, v in data["filters"].items() if v)
    rows = [
        ("Organisation", str(data["customer_id"]), False),
        ("Period", f"{period['from']} to {period['to']} (UTC days, both included)", False),
        ("Filters", filters or "none", False),
        ("Decisions analysed", printing.count(report.decisions), False),
        ("Generated at", printing.when(data["generated_at"]), False),
        ("Report data sha256", report.digest, True),
        ("Audit chain head", printing.figure("chain_head_hash", data["summary"]["chain_head_hash"]), True),
    ]
    return rows


def _log_rows(report: Report) -> list[list[tuple[str, bool]]]:
    out = []
    for row in report.log_rows(limit=PDF_LOG_ROWS):
        cells = []
        for key, _ in LOG_COLUMNS:
            value = row.get(key)
            if key == "timestamp":
                text = printing.when(value)[:-4]
            elif key == "ai_confidence":
                text = "not recorded" if value is None else f"{value:.2f}"
            elif key == "outcome":
                text = "not known" if value is None else str(value)
            elif key == "followed_ai":
                text = "yes" if value else "no"
            else:
                text = printing.figure(key, value)
            cells.append((text, key in NOWRAP_LOG_COLUMNS))
        out.append(cells)
    return out


def _verification(report: Report) -> dict[str, Any]:
    section = report.data["sections"][LOG_SECTION[report.template]]
    chain = section["chain_verification"]
    checkpoint = section.get("checkpoint")
    checkpoint = checkpoint if isinstance(checkpoint, dict) and checkpoint.get("note") else None
    return {
        "digest": report.digest,
        "generated_at": report.data["generated_at"],
        "verified_at": chain.get("verified_at", ""),
        "head_hash": printing.figure("head_hash", chain.get("head_hash")),
        "entries": printing.count(chain.get("entries_checked")),
        "covered": _covered(chain.get("covered")),
        "checkpoint": checkpoint,
        "checkpoint_absent": FEATURES["checkpoint"][2],
    }


def _covered(covered: Any) -> str:
    """The sequence range the chain verification covered, in a sentence (never a range it did
    not check: docs/reference/limits.md)."""
    if not isinstance(covered, dict) or not covered.get("to_sequence"):
        return "The chain had no entries to verify."
    last = covered["to_sequence"]
    through = covered.get("verified_through_sequence") or 0
    first = printing.count(covered["rechecked_from_sequence"])
    rechecked = f"entries {first} to {printing.count(last)} were rechecked when this report was generated"
    if through:
        earlier = (
            printing.when(covered["earlier_check_at"])
            if covered.get("earlier_check_at")
            else "an earlier check"
        )
        if through >= last:
            return f"Entries 1 to {printing.count(last)} were verified by a check at {earlier}; none was added since."
        return (
            f"Entries 1 to {printing.count(through)} were verified by a check at {earlier}, and {rechecked}."
        )
    return f"All entries, 1 to {printing.count(last)}, were verified when this report was generated."


def _sections(report: Report, info: dict[str, Any]) -> list[dict[str, Any]]:
    chart_by_section = _charts(report)
    features = FEATURE_SECTIONS[report.template]
    out = []
    for section in info["sections"]:
        body = report.data["sections"][section["id"]]
        blocks: list[dict[str, Any]] = []
        if section["id"] == "executive_summary":
            blocks.extend({"kind": "paragraph", "text": p, "lead": True} for p in _summary(report))
        if section["id"] in chart_by_section and chart_by_section[section["id"]]["uri"]:
            blocks.append({"kind": "chart", **chart_by_section[section["id"]]})
        if section["id"] == "recommendations":
            blocks.append(_recommendation_rows(body))
        else:
            # The Texas report lists each alert once, with its history, under incidents and cure.
            blocks.extend(_blocks(body, list_alerts=section["id"] != "discrimination_screening"))
        for key in features.get(section["id"], ()):
            blocks.extend(_feature_block(key, body.get(key)))
        if section["id"] == LOG_SECTION[report.template]:
            blocks.append({"kind": "log_pointer"})
        out.append({"id": section["id"], "title": section["title"], "blocks": blocks})
    return out


def render_pdf(report: Report, out: HashingWriter) -> None:
    info = template_info(report.template)
    log_total = report.decisions
    attach = log_total > PDF_LOG_ROWS
    period = report.data["time_period"]
    header = f"{report.data['customer_id']} · {period['from']} to {period['to']} (UTC)"
    eu = report.template == "eu_ai_act"
    log_rows = _log_rows(report)
    html = render_to_string(
        "compliance/report.html",
        {
            "info": info,
            # Margin boxes take CSS strings: only characters that cannot end or escape one.
            "header_left": mark_safe(_css_text(info["name"])),  # noqa: S308
            "header_right": mark_safe(_css_text(header)),  # noqa: S308
            "digest": report.digest,
            "title_rows": _title_rows(report),
            "compliance_status": report.compliance_status,
            "summary": [] if eu else _summary(report),
            "sections": _sections(report, info),
            "log_columns": [label for _, label in LOG_COLUMNS],
            "log_rows": log_rows,
            "log_widths": _widths(
                [label for _, label in LOG_COLUMNS],
                [[text for text, _ in row] for row in log_rows],
                [key in NOWRAP_LOG_COLUMNS for key, _ in LOG_COLUMNS],
                capacity=LOG_CHARS,
            ),
            "log_total": printing.count(log_total),
            "log_printed": printing.count(min(log_total, PDF_LOG_ROWS)),
            "attached": attach,
            "glossary": [t for t in GLOSSARY if eu or not t["term"].startswith("Compliance status")],
            "verify": _verification(report),
        },
    )
    document = HTML(string=html, url_fetcher=_NoNetworkFetcher())
    options: dict[str, Any] = {"pdf_variant": PDF_VARIANT, "uncompressed_pdf": False}
    if not attach:
        document.write_pdf(out, **options)
        return
    with tempfile.TemporaryDirectory(prefix="trustcal-report-") as folder:
        path = Path(folder) / "decision-log.csv"
        with path.open("wb") as csv_file:
            write_decision_log_csv(report, csv_file)
        attachment = Attachment(
            filename=str(path),
            name="decision-log.csv",
            description=f"The whole decision log of the report: {printing.count(log_total)} decisions",
            relationship="Data",
        )
        document.write_pdf(out, attachments=[attachment], **options)


def _css_text(text: str) -> str:
    return "".join(c for c in text if c.isalnum() or c in " -_.:·/()")[:120]
