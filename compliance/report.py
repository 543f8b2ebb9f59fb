"""A report's content, computed once into the json structure (docs/reference/reports.md) and then rendered to each
format: json (the data, its decision log streamed), csv (the filtered decision log, streamed
from a server-side cursor or COPY) and pdf (compliance/pdf.py)."""

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Protocol

from audit import selectors as audit_selectors
from calibration import reporting
from compliance import eu_ai_act, texas_traiga
from compliance.documents import Evidence
from compliance.evidence import Scope, gather
from compliance.evidence import alerts as evidence_alerts
from compliance.evidence import drift as evidence_drift
from compliance.evidence import rubber_stampers as evidence_rubber_stampers
from config import csvcells
from config.jsondoc import JSONObject
from config.timeutils import isoformat

LOG_PREVIEW_MAX = 500  # decision-log rows held in the report data (the json format streams all)
SECTION_BUILDERS: dict[str, Callable[[Evidence, list[JSONObject]], JSONObject]] = {
    "eu_ai_act": eu_ai_act.sections,
    "texas_traiga": texas_traiga.sections,
}
LOG_SECTION = {"eu_ai_act": "audit_trail", "texas_traiga": "monitoring_and_safeguards"}
CONTENT_TYPES = {"pdf": "application/pdf", "csv": "text/csv; charset=utf-8", "json": "application/json"}
_LOG_MARK = "\u0000decision-log\u0000"


@dataclass
class Report:
    template: str
    scope: Scope
    data: JSONObject  # the reports reference's json structure; its decision log holds the first rows only
    digest: str  # sha256 of the data as data_digest() computes it
    log_sha256: str = ""  # sha256 of the csv format of the same template, period and filters

    @property
    def log_section(self) -> JSONObject:
        return self.data["sections"][LOG_SECTION[self.template]]

    @property
    def decisions(self) -> int:
        return int(self.data["summary"]["total_decisions"])

    @property
    def compliance_status(self) -> str | None:
        return self.data["summary"].get("compliance_status") if self.template == "eu_ai_act" else None

    def log_rows(self, limit: int | None = None) -> Iterator[JSONObject]:
        return audit_selectors.decision_log_rows(self.scope.decisions(), limit=limit)


def log_report_build(*, scope: Scope, template: str) -> Report:
    """For the csv format, which is the decision log alone: no figures and no chain
    verification, only the compliance status (the calibration figures, the alerts and the
    rubber-stamp flags it rests on)."""
    _, recalibrate = reporting.recalibration_for(scope.decisions())
    org, users = reporting.user_figures(scope.decisions(), recalibrate=recalibrate)
    summary: JSONObject = {"total_decisions": org["decisions"]}
    if template == "eu_ai_act":
        summary["compliance_status"] = eu_ai_act.status_of(
            org=org,
            users=users,
            alerts=evidence_alerts(scope),
            rubber_stampers=evidence_rubber_stampers(scope),
            drift=evidence_drift(scope),
        )
    data = {
        "template": template,
        "time_period": scope.time_period,
        "filters": scope.filters,
        "summary": summary,
    }
    return Report(template=template, scope=scope, data=data, digest="")


def report_build(*, scope: Scope, template: str, generated_at: dt.datetime | None = None) -> Report:
    evidence = gather(scope)
    preview = list(audit_selectors.decision_log_rows(scope.decisions(), limit=LOG_PREVIEW_MAX))
    sections = SECTION_BUILDERS[template](evidence, preview)
    summary = eu_ai_act.executive_summary(evidence)
    data = {
        "template": template,
        "generated_at": isoformat(generated_at or dt.datetime.now(dt.UTC)),
        "customer_id": scope.customer.pk,
        "time_period": scope.time_period,
        "filters": scope.filters,
        "summary": {
            "total_decisions": summary["total_decisions"],
            "chain_head_hash": evidence["chain"]["head_hash"],
            **({"compliance_status": summary["compliance_status"]} if template == "eu_ai_act" else {}),
            "previous_period": evidence["previous_period"],
        },
        "sections": sections,
    }
    log_sha256 = decision_log_sha256(scope)
    digest = data_digest(data, template=template, decisions=summary["total_decisions"], log_sha256=log_sha256)
    return Report(template=template, scope=scope, data=data, digest=digest, log_sha256=log_sha256)


def generation_members(template: str) -> list[str]:
    """The members of the data that describe the moment the report was generated, not its period
    (the chain as it stood, the checkpoint printed, the time): the data digest leaves them out, so
    the json of the same template, period and filters reproduces it later (docs/reference/
    reports.md, "How to verify a report"); the recipe's steps 2 and 3 check them instead."""
    log = LOG_SECTION[template]
    return [
        "generated_at",
        "summary.chain_head_hash",
        f"sections.{log}.chain_verification",
        f"sections.{log}.checkpoint",
    ]


def data_digest(data: JSONObject, *, template: str, decisions: int, log_sha256: str) -> str:
    """SHA-256 of the data as canonical JSON (keys sorted, no spaces, UTF-8), without the
    generation members, its decision log standing for itself by its size and the sha256 of the
    csv format (which holds every row)."""
    stand_in = json.loads(json.dumps(data, default=str))
    for path in generation_members(template):
        *parents, last = path.split(".")
        holder = stand_in
        for part in parents:
            holder = holder[part]
        holder.pop(last, None)
    stand_in["sections"][LOG_SECTION[template]]["decision_log"] = {
        "decisions": decisions,
        "csv_sha256": log_sha256,
    }
    canonical = json.dumps(stand_in, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class BytesOut(Protocol):
    """Where a report's bytes go: a file, a HashingWriter, an HTTP response."""

    def write(self, data: bytes, /) -> object: ...


class HashingWriter:
    """Writes bytes to a file while counting them and hashing them (sha256)."""

    def __init__(self, target: "IO[bytes] | _Discard") -> None:
        self.target = target
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        self.target.write(data)
        return len(data)


def render_json(report: Report, out: HashingWriter) -> None:
    """The data with its whole decision log, streamed row by row (constant memory)."""
    data = json.loads(json.dumps(report.data, default=str))
    data["sections"][LOG_SECTION[report.template]]["decision_log"] = _LOG_MARK
    text = json.dumps(data, ensure_ascii=False, indent=1)
    head, tail = text.split(json.dumps(_LOG_MARK), 1)
    out.write(head.encode() + b"[")
    first = True
    buffer: list[str] = []
    for row in report.log_rows():
        buffer.append(("\n" if first else ",\n") + json.dumps(row, ensure_ascii=False))
        first = False
        if len(buffer) >= 1000:
            out.write("".join(buffer).encode())
            buffer.clear()
    out.write("".join(buffer).encode() + b"]" + tail.encode())


def _csv_value(value: object) -> object:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return csvcells.cell(value)


def _csv_field(value: object) -> str:
    """One CSV field as PostgreSQL's COPY writes it: quoted when it holds a comma, a quote, a
    line feed or a carriage return (the stdlib writer leaves a lone CR bare when lines end
    in LF, which splits the row for a reader)."""
    text = "" if value is None else str(value)
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_decision_log_csv(report: Report, out: BytesOut) -> None:
    write_log_csv(report.scope, out)


class _Discard:
    def write(self, data: bytes) -> int:
        return len(data)


def decision_log_sha256(scope: Scope) -> str:
    """The sha256 of the csv format of a scope, computed by writing it (COPY on PostgreSQL)."""
    writer = HashingWriter(_Discard())
    write_log_csv(scope, writer)
    return writer.sha256.hexdigest()


def write_log_csv(scope: Scope, out: BytesOut) -> None:
    """The compliance CSV: the filtered decision log, header first, text cells made
    spreadsheet-safe (config.csvcells); COPY on PostgreSQL."""
    if audit_selectors.decision_log_copy(scope.decisions(), out.write):
        return
    lines = [",".join(audit_selectors.DECISION_LOG_COLUMNS)]
    for row in audit_selectors.decision_log_rows(scope.decisions()):
        lines.append(",".join(_csv_field(_csv_value(v)) for v in row.values()))
        if len(lines) >= 2000:
            out.write(("\n".join(lines) + "\n").encode())
            lines.clear()
    if lines:
        out.write(("\n".join(lines) + "\n").encode())


def render_csv(report: Report, out: HashingWriter) -> None:
    write_decision_log_csv(report, out)
