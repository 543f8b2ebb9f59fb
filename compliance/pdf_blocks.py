"""The blocks of a PDF section (facts, tables, headings, alert cards, feature partials), made
from a section's data in the order it holds them; templates/compliance/report.html lays them out."""

from collections.abc import Callable, Iterable
from typing import Any

from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from compliance import (
    citations,
    confidence_print,
    drift_print,
    erasure_print,
    oversight_print,
    printing,
    profile_print,
)
from compliance.pdf_alerts import amplification_blocks, bias_blocks, incident_blocks
from compliance.pdf_tables import is_counts, is_scalar_list, label, table
from config.jsondoc import JSONObject

# Thresholds the Texas report borrows from the EU AI Act report (compliance/recommendations.py).
BORROWED = {"overtrust_rate"}
# Recommendations whose figure is a count of what needs acting on (its threshold a count too).
COUNTED = {"category", "flagged_reviewers", "missed_probes", "by_severity"}
MOVED = {"decision_log", "compliance_status_reason", "status_history"}

# Where the figures of review effort, vigilance and signed checkpoints print, their headings, and
# why they are absent until their feature adds them; what each evidences is compliance/citations.py.
FEATURE_SECTIONS = {
    "eu_ai_act": {
        "executive_summary": ("system_description",),
        "trust_calibration_analysis": ("review_effort", "vigilance", "drift_monitoring"),
        "audit_trail": ("checkpoint", "erasures"),
    },
    "texas_traiga": {
        "system_and_purpose": ("system_description",),
        "disclosure_and_human_review": ("review_effort", "vigilance"),
        "monitoring_and_safeguards": ("checkpoint", "erasures", "drift_monitoring"),
    },
}
FEATURES = {
    "review_effort": (
        "Review effort: did the reviewer look?",
        "no decision of the period records how long its reviewer looked at it",
    ),
    "vigilance": (
        "Vigilance: would the reviewer catch a wrong AI answer?",
        "no vigilance probe was logged in the period",
    ),
    "checkpoint": (
        "Signed checkpoint of the audit trail",
        "no signed checkpoint of the audit chain exists at the report's generation",
    ),
    "erasures": ("Erasures of personal data", "the erasures of the period could not be read"),
    "drift_monitoring": (
        "Drift monitoring: sequential alarms on reliance, calibration and vigilance",
        "the drift monitors could not be read",
    ),
    "system_description": ("System description", "the system profiles could not be read"),
}
# Partials that take their figures already printed (compliance/oversight_print.py).
PRINTERS: dict[str, Callable[[Any], Any]] = {  # Any: each printer reads and prints its own figures' shape
    "review_effort": oversight_print.review_effort,
    "vigilance": oversight_print.vigilance,
    "erasures": erasure_print.erasures,
    "drift_monitoring": drift_print.drift_monitoring,
    "system_description": profile_print.system_description,
}


def feature_block(key: str, value: object, template: str) -> Iterable[JSONObject]:
    title, absent = FEATURES[key]
    yield {"kind": "heading", "text": title, "depth": 1}
    yield {"kind": "paragraph", "text": citations.point(key, template), "note": True}
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
    if isinstance(shown, dict) and isinstance(shown.get("sequence"), int):
        shown["sequence"] = printing.count(shown["sequence"])
    printer = PRINTERS.get(key)
    figures = printer(value) if printer is not None else None
    yield {"kind": "partial", "template": partial, "value": shown, "figures": figures}


def _is_fact(key: str, value: object) -> bool:
    return (
        key not in MOVED
        and key not in FEATURES
        and (not isinstance(value, dict | list) or is_scalar_list(value))
    )


def _alert_blocks(key: str, item: object, list_alerts: bool) -> Iterable[JSONObject] | None:
    """The alert cards of an alerts member, or None when `key` holds no alerts."""
    if key == "amplification_alerts" and isinstance(item, dict):
        return amplification_blocks(item, list_alerts=list_alerts)
    if key == "bias_alerts" and isinstance(item, dict):
        return bias_blocks(item, list_alerts=list_alerts)
    if key in ("amplification_alerts", "bias_alerts") and isinstance(item, list):
        return incident_blocks(key, item)
    return None


def _attribute_tables(attributes: JSONObject) -> Iterable[JSONObject]:
    if not attributes:
        yield {"kind": "paragraph", "text": "No subgroup attribute was recorded in the period."}
    for name, attribute in attributes.items():
        yield table(
            "groups",
            attribute["groups"],
            f"Attribute {name} (reference group {attribute['reference_group']})",
        )


def _member_blocks(key: str, item: object, depth: int) -> Iterable[JSONObject]:
    """A member that is not a fact: a list of rows as a table, a dict under its own heading (the
    chain's range as a sentence, the subgroup attributes as a table each)."""
    if isinstance(item, list):
        if item and isinstance(item[0], dict):
            yield table(key, item, label(key))
        return
    if not isinstance(item, dict):
        return
    if key == "covered":
        yield {"kind": "facts", "rows": [("Range verified", covered_sentence(item))]}
    elif key == "confidence_check":
        yield {"kind": "heading", "text": label(key), "depth": depth + 1}
        yield {"kind": "facts", "rows": confidence_print.facts(item)}
    elif key == "attributes":
        yield from _attribute_tables(item)
    elif item:
        title = "Direction of the trend" if key == "trend" and depth else label(key)
        yield {"kind": "heading", "text": title, "depth": depth + 1}
        yield from blocks(item, depth=depth + 1)


def blocks(value: JSONObject, *, depth: int = 0, list_alerts: bool = True) -> Iterable[JSONObject]:
    facts = [(label(k), printing.figure(k, v)) for k, v in value.items() if _is_fact(k, v)]
    facts += [(label(k), printing.by_key(v)) for k, v in value.items() if is_counts(v)]
    if facts:
        yield {"kind": "facts", "rows": facts}
    for key, item in value.items():
        if key in MOVED or key in FEATURES or is_counts(item):
            continue
        alerts = _alert_blocks(key, item, list_alerts)
        yield from alerts if alerts is not None else _member_blocks(key, item, depth)


def recommendation_rows(recommendations: list[JSONObject], template: str) -> JSONObject:
    rows = []
    for rec in recommendations:
        key = str(rec["figure"]).split(".")[-1]
        value, threshold = rec["value"], rec["threshold"]
        if isinstance(value, str):  # an alert to triage, named in the recommendation
            measured = f"unresolved (threshold: {printing.figure(key, threshold)})"
        elif key in COUNTED:  # a count of reviewers, probes or alerts to act on
            measured = f"{printing.figure(key, value)} (threshold {printing.figure(key, threshold)})"
        else:
            whose = (
                "the EU AI Act report's threshold"
                if template != citations.EU_AI_ACT and key in BORROWED
                else "threshold"
            )
            measured = f"{printing.figure(key, value)} ({whose} {printing.figure(key, threshold)})"
        rows.append([rec["priority"], rec["text"], measured])
    return {
        "kind": "table",
        "title": "Recommendations, most urgent first",
        "columns": ["Priority", "Recommendation", "Figure and threshold"],
        "rows": rows,
        "widths": [10, 62, 28],
        "note": "",
    }


def covered_sentence(covered: object) -> str:
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
