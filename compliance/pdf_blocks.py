"""The blocks of a PDF section (facts, tables, headings, alert cards, feature partials), made
from a section's data in the order it holds them; templates/compliance/report.html lays them out."""

from collections.abc import Iterable
from typing import Any

from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from compliance import erasure_print, oversight_print, printing
from compliance.pdf_alerts import amplification_blocks, bias_blocks, incident_blocks
from compliance.pdf_tables import is_counts, is_scalar_list, label, table

MOVED = {"decision_log", "compliance_status_reason", "status_history"}

# Where the figures of review effort, vigilance and signed checkpoints print, with the Article
# 14(4) point each evidences, and why they are absent until their feature adds them.
FEATURE_SECTIONS = {
    "eu_ai_act": {
        "trust_calibration_analysis": ("review_effort", "vigilance"),
        "audit_trail": ("checkpoint", "erasures"),
    },
    "texas_traiga": {
        "disclosure_and_human_review": ("review_effort", "vigilance"),
        "monitoring_and_safeguards": ("checkpoint", "erasures"),
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
    "erasures": (
        "Erasures of personal data",
        "GDPR Art. 17 and 5(1)(e) beside AI Act Art. 12 and 19(1): personal data erased on request or "
        "at the retention maximum, while the logs stay complete and verifiable.",
        "the erasures of the period could not be read",
    ),
}
# Partials that take their figures already printed (compliance/oversight_print.py).
PRINTERS = {
    "review_effort": oversight_print.review_effort,
    "vigilance": oversight_print.vigilance,
    "erasures": erasure_print.erasures,
}


def feature_block(key: str, value: Any) -> Iterable[dict[str, Any]]:
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
        yield from blocks(value if isinstance(value, dict) else {key: value}, depth=1)
        return
    shown = dict(value) if isinstance(value, dict) else value
    if isinstance(shown, dict) and shown.get("created_at"):
        shown["created_at"] = printing.when(shown["created_at"])
    printer = PRINTERS.get(key)
    figures = printer(value) if printer is not None else None
    yield {"kind": "partial", "template": partial, "value": shown, "figures": figures}


def blocks(value: dict[str, Any], *, depth: int = 0, list_alerts: bool = True) -> Iterable[dict[str, Any]]:
    facts = [
        (label(k), printing.figure(k, v))
        for k, v in value.items()
        if k not in MOVED and k not in FEATURES and (not isinstance(v, dict | list) or is_scalar_list(v))
    ]
    facts += [(label(k), printing.by_key(v)) for k, v in value.items() if is_counts(v)]
    if facts:
        yield {"kind": "facts", "rows": facts}
    for key, item in value.items():
        if key in MOVED or key in FEATURES or is_counts(item):
            continue
        if key == "amplification_alerts" and isinstance(item, dict):
            yield from amplification_blocks(item, list_alerts=list_alerts)
        elif key == "bias_alerts" and isinstance(item, dict):
            yield from bias_blocks(item, list_alerts=list_alerts)
        elif key in ("amplification_alerts", "bias_alerts") and isinstance(item, list):
            yield from incident_blocks(key, item)
        elif isinstance(item, list) and item and isinstance(item[0], dict):
            yield table(key, item, label(key))
        elif isinstance(item, list) and not item and not is_scalar_list(item):
            continue
        elif isinstance(item, dict) and key == "attributes":
            if not item:
                yield {"kind": "paragraph", "text": "No subgroup attribute was recorded in the period."}
            for name, attribute in item.items():
                title = f"Attribute {name} (reference group {attribute['reference_group']})"
                yield table("groups", attribute["groups"], title)
        elif isinstance(item, dict) and item:
            title = "Direction of the trend" if key == "trend" and depth else label(key)
            yield {"kind": "heading", "text": title, "depth": depth + 1}
            yield from blocks(item, depth=depth + 1)


def recommendation_rows(recommendations: list[dict[str, Any]]) -> dict[str, Any]:
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
