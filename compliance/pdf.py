"""The PDF format: the report data laid out as a document an auditor files (docs/reference/
reports.md). A title page, a table of contents with page numbers, the finding in sentences,
every section with its tables and charts, every alert of the period with its status history,
and appendices: the decision log (first PDF_LOG_ROWS rows, landscape), the glossary, how to
verify the report, and an attestation block for signatures. Rendered by the HTML template
templates/compliance/report.html with WeasyPrint as PDF/A-3b. Associated files of the document:
the signed checkpoint (checkpoint-note.txt) and the verifier key (verifier-key.txt), which the
offline verifier reads from the PDF itself, and, when the log has more rows than are printed, the
whole log as decision-log.csv.

Every value goes through compliance/printing.py, so no program representation of a value (None,
nan, a dict or a list) reaches the page."""

import base64
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from weasyprint import HTML, Attachment
from weasyprint.urls import URLFetcher, URLFetcherResponse, URLFetchingError

from audit import pdf_files
from compliance import charts, drift_print, printing
from compliance.catalogue import template_info
from compliance.glossary import GLOSSARY
from compliance.pdf_appendix import (
    LOG_COLUMNS,
    NOWRAP_LOG_COLUMNS,
    PDF_LOG_ROWS,
    log_rows,
    title_rows,
    verification,
)
from compliance.pdf_blocks import FEATURE_SECTIONS, blocks, feature_block, recommendation_rows
from compliance.pdf_summary import summary
from compliance.pdf_tables import LOG_CHARS, widths
from compliance.report import LOG_SECTION, HashingWriter, Report, write_decision_log_csv
from config.jsondoc import JSONObject
from drift import reporting as drift_reporting
from drift.charts import Sprt

PDF_VARIANT = "pdf/a-3b"
CHART_SECTIONS = {
    "eu_ai_act": {"trust_calibration_analysis": "trend", "bias_detection_summary": "subgroups"},
    "texas_traiga": {"monitoring_and_safeguards": "trend", "discrimination_screening": "subgroups"},
}


class _NoNetworkFetcher(URLFetcher):
    """The report embeds everything (charts as data: URLs); nothing else is fetched."""

    def fetch(self, url: str, headers: Mapping[str, str] | None = None) -> URLFetcherResponse:
        if not url.startswith("data:"):
            raise URLFetchingError(f"refused to fetch {url[:40]}")
        return super().fetch(url, headers)


def _svg_uri(svg: str | None) -> str | None:
    return None if svg is None else "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _charts(report: Report) -> dict[str, JSONObject]:
    out: dict[str, JSONObject] = {}
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


def _sections(report: Report, info: JSONObject) -> list[JSONObject]:
    chart_by_section = _charts(report)
    features = FEATURE_SECTIONS[report.template]
    out = []
    for section in info["sections"]:
        body = report.data["sections"][section["id"]]
        parts: list[JSONObject] = []
        if section["id"] == "executive_summary":
            parts.extend({"kind": "paragraph", "text": p, "lead": True} for p in summary(report))
        if section["id"] in chart_by_section and chart_by_section[section["id"]]["uri"]:
            parts.append({"kind": "chart", **chart_by_section[section["id"]]})
        if section["id"] == "recommendations":
            parts.append(recommendation_rows(body, report.template))
        else:
            # The Texas report lists each alert once, with its history, under incidents and cure.
            parts.extend(blocks(body, list_alerts=section["id"] != "discrimination_screening"))
        subsections = []
        for key in features.get(section["id"], ()):
            feature = list(feature_block(key, body.get(key), report.template))
            if key == "drift_monitoring" and body.get(key) is not None:
                _add_drift_charts(report, body[key], feature)
            feature[0]["anchor"] = f"{section['id']}-{key}"
            subsections.append({"anchor": feature[0]["anchor"], "title": feature[0]["text"]})
            parts.extend(feature)
        if section["id"] == LOG_SECTION[report.template]:
            parts.append({"kind": "log_pointer"})
        out.append(
            {"id": section["id"], "title": section["title"], "blocks": parts, "subsections": subsections}
        )
    return out


def _add_drift_charts(report: Report, drift: JSONObject, feature: list[JSONObject]) -> None:
    """A chart per monitor with an alarm in the period (the first CHARTS_MAX), drawn from its
    points of the period (docs/reference/reports.md, Drift monitoring)."""
    partial = next((block for block in feature if block["kind"] == "partial"), None)
    if partial is None:
        return
    scope = report.scope
    for monitor in [m for m in drift["monitors"] if m["alarms_in_period"]][: drift_print.CHARTS_MAX]:
        points = drift_reporting.chart_points(
            scope.customer, monitor["monitor_id"], start=scope.start, end=scope.end
        )
        if not points:
            continue
        sprt = monitor.get("sprt")
        bounds = sprt_bounds(sprt) if sprt else None
        h = bounds[0] if bounds else monitor["h"]
        title = f"{drift_print.CHART_NAMES.get(monitor['chart'], monitor['chart'])}, {drift_print.who(monitor)}: {monitor['name']}"
        svg = charts.drift_chart(points, h=h, title=title[:90], lower=bounds[1] if bounds else None)
        caption = (
            f"{monitor['name']}: the chart's statistic against its point index over the period, the alarm "
            "limit (dashed), signals (triangles) and restarts (ticks)."
        )
        partial["figures"]["charts"].append({"uri": _svg_uri(svg), "caption": caption})


def sprt_bounds(sprt: JSONObject) -> tuple[float, float]:
    test = Sprt(sprt["p0"], sprt["p1"], sprt["alpha"], sprt["beta"])
    return test.upper_bound, test.lower_bound


# A figure's unit stays on the line of its number ("-14.4 pp"); a percentage has none ("5.0%").
UNIT_AFTER_NUMBER = re.compile(r"(?<=\d) (%|pp\b)")


def report_html(report: Report) -> str:
    """The HTML the PDF is laid out from (tests lay it out too, to check lines and breaks)."""
    info = template_info(report.template)
    log_total = report.decisions
    attach = log_total > PDF_LOG_ROWS
    period = report.data["time_period"]
    header = f"{report.data['customer_id']} · {period['from']} to {period['to']} (UTC)"
    eu = report.template == "eu_ai_act"
    printed_log = log_rows(report)
    html = render_to_string(
        "compliance/report.html",
        {
            "info": info,
            # Margin boxes take CSS strings: only characters that cannot end or escape one.
            "header_left": mark_safe(_css_text(info["name"])),  # noqa: S308
            "header_right": mark_safe(_css_text(header)),  # noqa: S308
            "digest": report.digest,
            "title_rows": title_rows(report),
            "compliance_status": report.compliance_status,
            "summary": [] if eu else summary(report),
            "sections": _sections(report, info),
            "log_columns": [label for _, label in LOG_COLUMNS],
            "log_rows": printed_log,
            "log_widths": widths(
                [label for _, label in LOG_COLUMNS],
                [[text for text, _ in row] for row in printed_log],
                [key in NOWRAP_LOG_COLUMNS for key, _ in LOG_COLUMNS],
                capacity=LOG_CHARS,
            ),
            "log_total": printing.count(log_total),
            "log_printed": printing.count(min(log_total, PDF_LOG_ROWS)),
            "attached": attach,
            "glossary": [t for t in GLOSSARY if eu or not t["term"].startswith("Compliance status")],
            "verify": verification(report),
            # The PDF's CreationDate and ModDate (Info and XMP): the report is made once, at its generation.
            "created": report.data["generated_at"][:19] + "Z",
        },
    )
    return UNIT_AFTER_NUMBER.sub("\u00a0\\1", html)


def _checkpoint_files(report: Report) -> list[tuple[str, bytes, str]]:
    """The signed checkpoint and the verifier key, as files an auditor carries to the offline
    verifier (which reads them from the PDF itself): (name, content, description)."""
    checkpoint = report.data["sections"][LOG_SECTION[report.template]].get("checkpoint") or {}
    files = []
    if checkpoint.get("note"):
        files.append(
            (
                pdf_files.CHECKPOINT_NOTE,
                checkpoint["note"].encode("utf-8"),
                f"The signed checkpoint of the audit trail: entries 1 to {checkpoint['sequence']}",
            )
        )
    if checkpoint.get("verifier_key"):
        files.append(
            (
                pdf_files.VERIFIER_KEY,
                (checkpoint["verifier_key"] + "\n").encode("utf-8"),
                "The verifier key of the service's checkpoint signatures",
            )
        )
    return files


def render_pdf(report: Report, out: HashingWriter) -> None:
    """The PDF, with its associated files: the signed checkpoint and the verifier key, and the
    whole decision log when more rows than are printed."""
    log_total = report.decisions
    document = HTML(string=report_html(report), url_fetcher=_NoNetworkFetcher())
    options: dict[str, object] = {"pdf_variant": PDF_VARIANT, "uncompressed_pdf": False}
    with tempfile.TemporaryDirectory(prefix="trustcal-report-") as folder:
        attachments = []
        for name, content, description in _checkpoint_files(report):
            path = Path(folder) / name
            path.write_bytes(content)
            attachments.append(
                Attachment(filename=str(path), name=name, description=description, relationship="Data")
            )
        if log_total > PDF_LOG_ROWS:
            path = Path(folder) / "decision-log.csv"
            with path.open("wb") as csv_file:
                write_decision_log_csv(report, csv_file)
            attachments.append(
                Attachment(
                    filename=str(path),
                    name="decision-log.csv",
                    description=f"The whole decision log of the report: {printing.count(log_total)} decisions",
                    relationship="Data",
                )
            )
        document.write_pdf(out, attachments=attachments, **options)


def _css_text(text: str) -> str:
    return "".join(c for c in text if c.isalnum() or c in " -_.:·/()")[:120]
