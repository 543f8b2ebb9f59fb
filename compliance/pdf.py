"""The PDF format: the report data laid out as blocks (facts, tables, charts), rendered by an
HTML template under templates/compliance/ and WeasyPrint. A title page, a table of contents
with page numbers, every section with its tables, two charts, and the decision log: printed
up to 500 entries, and beyond that attached whole inside the PDF as a CSV file."""

import base64
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from weasyprint import HTML, Attachment
from weasyprint.urls import URLFetcher, URLFetchingError

from compliance import charts, oversight_print
from compliance.catalogue import template_info
from compliance.report import LOG_PREVIEW_MAX, LOG_SECTION, HashingWriter, Report, write_decision_log_csv

# Columns printed for the tables that have more than fit a page (the json and CSV hold all).
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
    "decision_log": [
        "decision_id",
        "timestamp",
        "user_id",
        "model_id",
        "ai_recommendation",
        "ai_confidence",
        "user_decision",
        "followed_ai",
        "calibration_category",
        "outcome",
        "context",
    ],
    "groups": [
        "group",
        "decisions",
        "ai_favorable_rate",
        "favorable_rate",
        "override_rate",
        "accuracy",
        "ai_accuracy",
        "disparity.disparate_impact_ratio",
        "disparity.override_rate_difference",
    ],
    "items": [
        "alert_id",
        "model_id",
        "severity",
        "status",
        "protected_attribute",
        "amplification_score",
        "created_at",
    ],
    "amplification_alerts": [
        "alert_id",
        "model_id",
        "severity",
        "status",
        "protected_attribute",
        "created_at",
    ],
    "recommendations": ["priority", "figure", "value", "threshold", "text"],
}
# Column widths (percent) of the tables whose automatic layout squeezes the long text.
TABLE_WIDTHS = {
    "decision_log": [10, 14, 9, 7, 8, 6, 8, 5, 10, 7, 16],
    "recommendations": [8, 20, 14, 9, 49],
}
LABELS = {"items": "Alerts", "unresolved_high_or_critical": "Unresolved high or critical alerts"}
TABLE_ROWS_MAX = 200
CELL_MAX = 160
FACT_MAX = 1000  # prose (notes, limitations) is printed whole
# Figures laid out by their own partial template (templates/compliance/_<key>.html) rather
# than by the generic blocks: the section passes them to it, printed by oversight_print.
PARTIALS = {"review_effort": oversight_print.review_effort, "vigilance": oversight_print.vigilance}
CHART_SECTIONS = {
    "eu_ai_act": {"trust_calibration_analysis": "trend", "bias_detection_summary": "subgroups"},
    "texas_traiga": {"monitoring_and_safeguards": "trend", "discrimination_screening": "subgroups"},
}


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
    for short in ("ai", "rair", "rsr", "id", "nist", "rmf"):
        text = " ".join(w.upper() if w == short else w for w in text.split(" "))
    return text[:1].upper() + text[1:]


def _cell(value: Any, limit: int = CELL_MAX) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value == value else "-"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _get(row: dict[str, Any], column: str) -> Any:
    value: Any = row
    for part in column.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _table(key: str, rows: list[dict[str, Any]], title: str) -> dict[str, Any]:
    columns = TABLE_COLUMNS.get(key) or [k for k, v in rows[0].items() if not isinstance(v, list)][:8]
    shown = rows[: LOG_PREVIEW_MAX if key == "decision_log" else TABLE_ROWS_MAX]
    limit = 2000 if key == "recommendations" else 100 if key == "decision_log" else CELL_MAX
    return {
        "kind": "table",
        "title": title,
        "columns": [_label(c.split(".")[-1]) for c in columns],
        "rows": [[_cell(_get(row, c), limit) for c in columns] for row in shown],
        "widths": TABLE_WIDTHS.get(key),
        "note": (
            f"First {len(shown)} of {len(rows)} rows; the json export holds all."
            if len(rows) > len(shown)
            else ""
        ),
        "wide": len(columns) > 7,
    }


def _blocks(value: dict[str, Any], *, depth: int = 0) -> Iterable[dict[str, Any]]:
    facts = [
        (k, v if v != [] else "none")
        for k, v in value.items()
        if not isinstance(v, dict | list) or _is_scalar_list(v)
    ]
    if facts:
        yield {"kind": "facts", "rows": [(_label(k), _cell(v, FACT_MAX)) for k, v in facts]}
    for key, item in value.items():
        if key in PARTIALS and depth == 0:
            continue
        if isinstance(item, list) and item and isinstance(item[0], dict):
            yield _table(key, item, _label(key))
        elif isinstance(item, list) and not item and not _is_scalar_list(item):
            pass
        elif isinstance(item, dict) and key == "attributes":
            for name, attribute in item.items():
                title = f"Attribute {name} (reference group {attribute['reference_group']})"
                yield _table("groups", attribute["groups"], title)
        elif isinstance(item, dict) and item:
            yield {"kind": "heading", "text": _label(key), "depth": depth + 1}
            yield from _blocks(item, depth=depth + 1)


def _css_text(text: str) -> str:
    return "".join(c for c in text if c.isalnum() or c in " -_.:·/()")[:120]


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, dict | list) for v in value)


def _svg_uri(svg: str | None) -> str | None:
    return None if svg is None else "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _charts(report: Report) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for section_id, kind in CHART_SECTIONS[report.template].items():
        section = report.data["sections"][section_id]
        if kind == "trend":
            out[section_id] = {
                "uri": _svg_uri(charts.trust_trend(section["trend"])),
                "caption": "Trust-score trend",
            }
        else:
            uri = _svg_uri(charts.subgroups(section["subgroups"]["attributes"]))
            caption = "Favourable rate per subgroup: the AI's recommendations against the human decisions"
            out[section_id] = {"uri": uri, "caption": caption}
    return out


def render_pdf(report: Report, out: HashingWriter) -> None:
    info = template_info(report.template)
    chart_by_section = _charts(report)
    sections = []
    for section in info["sections"]:
        body = report.data["sections"][section["id"]]
        blocks = (
            [{"kind": "chart", **chart_by_section[section["id"]]}]
            if section["id"] in chart_by_section
            else []
        )
        if section["id"] == "recommendations":
            blocks.append(_table("recommendations", body, "Recommendations"))
        else:
            # The signed checkpoint and the oversight figures have partials of their own
            # (templates/compliance/_checkpoint.html, _review_effort.html, _vigilance.html).
            blocks.extend(_blocks({k: v for k, v in body.items() if k != "checkpoint"}))
        printed = {
            key: PARTIALS[key](body[key]) for key in PARTIALS if isinstance(body, dict) and key in body
        }
        sections.append(
            {
                "id": section["id"],
                "title": section["title"],
                "blocks": blocks,
                "checkpoint": body.get("checkpoint") if isinstance(body, dict) else None,
                **printed,
            }
        )
    log_total = report.decisions
    attach = log_total > LOG_PREVIEW_MAX
    period = report.data["time_period"]
    header = f"{report.data['customer_id']} · {period['from']} to {period['to']}"
    html = render_to_string(
        "compliance/report.html",
        {
            "info": info,
            # Margin boxes take CSS strings: only characters that cannot end or escape one.
            "header_left": mark_safe(_css_text(info["name"])),  # noqa: S308
            "header_right": mark_safe(_css_text(header)),  # noqa: S308
            "data": report.data,
            "digest": report.digest,
            "sections": sections,
            "log_total": log_total,
            "log_printed": min(log_total, LOG_PREVIEW_MAX),
            "attached": attach,
            "log_section": LOG_SECTION[report.template],
        },
    )
    document = HTML(string=html, url_fetcher=_NoNetworkFetcher())
    if not attach:
        document.write_pdf(out)
        return
    with tempfile.TemporaryDirectory(prefix="trustcal-report-") as folder:
        path = Path(folder) / "decision-log.csv"
        with path.open("wb") as csv_file:
            write_decision_log_csv(report, csv_file)
        attachment = Attachment(
            filename=str(path),
            name="decision-log.csv",
            description=f"The whole decision log of the report: {log_total} decisions",
        )
        document.write_pdf(out, attachments=[attachment])
