"""The title page and the appendices of the PDF: the decision log rows and how to verify the
report (docs/reference/reports.md, "How to verify a report")."""

import json

from compliance import printing
from compliance.pdf_blocks import FEATURES, covered_sentence
from compliance.pdf_tables import label
from compliance.report import LOG_SECTION, Report, generation_members
from config.jsondoc import JSONObject

PDF_LOG_ROWS = 200  # decision-log rows printed; beyond, the whole log is embedded as CSV
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


def title_rows(report: Report) -> list[tuple[str, str, bool]]:
    data = report.data
    period = data["time_period"]
    filters = "; ".join(f"{label(k)}: {printing.enumeration(v)}" for k, v in data["filters"].items() if v)
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


def log_rows(report: Report) -> list[list[tuple[str, bool]]]:
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


def verification(report: Report) -> JSONObject:
    """What Appendix C prints: the recipe's inputs, each exactly as the steps use it."""
    log = LOG_SECTION[report.template]
    section = report.data["sections"][log]
    chain = section["chain_verification"]
    checkpoint = section.get("checkpoint")
    checkpoint = checkpoint if isinstance(checkpoint, dict) and checkpoint.get("note") else None
    request = {
        "template": report.template,
        "format": "json",
        "time_period": report.data["time_period"],
        "filters": report.data["filters"],
    }
    return {
        "digest": report.digest,
        "request": json.dumps(request, ensure_ascii=False),
        "members": generation_members(report.template),
        "log_member": f"sections.{log}.decision_log",
        "stand_in": json.dumps({"decisions": report.decisions, "csv_sha256": report.log_sha256}),
        "log_sha256": report.log_sha256,
        "verified_at": printing.when(chain.get("verified_at")),
        "valid": bool(chain.get("valid")),
        "head_hash": printing.figure("head_hash", chain.get("head_hash")),
        "size": chain.get("entries_checked") or 0,
        "entries": printing.count(chain.get("entries_checked")),
        "covered": covered_sentence(chain.get("covered")),
        "checkpoint": checkpoint,
        "checkpoint_at_head": checkpoint is not None
        and checkpoint["sequence"] == chain.get("entries_checked"),
        "checkpoint_absent": FEATURES["checkpoint"][1],
        "withheld": not report.scope.per_person,
    }
