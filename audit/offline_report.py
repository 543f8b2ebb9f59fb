"""An auditor's re-derivation of a report's figures from the audit-trail export alone: no
database, no Django, no access to the service.

    python3 -m audit.offline_verify --report REPORT.json EXPORT.ndjson

REPORT is a report in the json format (GET /export/:id/download), EU AI Act or Texas TRAIGA;
EXPORT is GET /audit-trail/export from the first entry (verify it first with offline_verify's
checkpoint mode). From the export's decision and outcome entries this rebuilds every decision as
it stood, keeps those of the report's period and filters, leaves the vigilance probes out as the
service does (and says how many), recomputes the calibration figures with the service's own
formulas (`audit/measures.py`, docs/reference/calibration.md) and prints, for each headline
figure and each of every reviewer's figures (category and risk included), the report's value,
the recomputed value and whether they match. Its last line says "all N figures match" (exit
status 0) or "N figures differ: " and names them (exit status 1); exit status 2 when an input
could not be read. The EU compliance status also rests on the alerts and the review-effort
flags, which the export does not hold: its calibration inputs are checked. An erased entry no
longer names its reviewer, so with erased decisions in the window the figures that group
decisions by reviewer, and every reviewer's own, are printed as not recomputable (all of them
under a reviewer filter), and the rest are checked (docs/reference/reports.md, "How to verify a
report", step 5).
"""

import argparse
import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from audit import measures, measures_stats
from audit.hashing import strict_loads
from audit.jsondoc import JSONObject, JSONValue
from audit.offline_figures import (
    BY_REVIEWER as BY_REVIEWER,
)
from audit.offline_figures import (
    INITIAL_DECISION_FIGURES,
    ORGANISATION_FIGURES,
    SUMMARY_FIGURES,
    SUMMARY_SOURCE,
    TEXAS_FIGURES,
    USER_FIGURES,
)
from audit.offline_inputs import short

TOLERANCE = 1e-9  # the report's figures are stored unrounded; only float summation order may differ


class Unreadable(Exception):
    """An input that is not what it should be (exit status 2)."""


@dataclass
class State:
    """A decision as the export's entries leave it."""

    timestamp: dt.datetime
    user_id: str
    model_id: str | None
    ai_recommendation: str
    ai_confidence: float | None
    user_decision: str
    outcome: str | None
    erased: bool = False  # its personal fields were erased: its reviewer is not in the export
    probe: bool = False  # a vigilance probe: left out of every figure, as the service does
    initial_decision: str | None = None
    initial_hashed: bool = False  # its entry's canonical text holds `initial_decision`


def _instant(value: str, *, end: bool) -> dt.datetime:
    """A report bound: an ISO 8601 instant, or a date (its UTC day; an end date includes the day)."""
    text = value.replace("Z", "+00:00")
    if len(text) == 10:
        day = dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), tzinfo=dt.UTC)
        return day + dt.timedelta(days=1) if end else day
    return dt.datetime.fromisoformat(text).astimezone(dt.UTC)


# The entries that record a decision (its snapshot); the others (erasures, retention policy
# changes) record no decision.
DECISION_ENTRY_TYPES = frozenset({"decision", "outcome", "subgroups_attached"})


def decisions_of(lines: Iterable[str]) -> Iterator[State]:
    """Each decision of the export as its last entry leaves it (a later entry of the same decision
    carries its late outcome)."""
    states: dict[str, State] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = strict_loads(line)
            if doc.get("type") not in DECISION_ENTRY_TYPES:
                continue  # an erasure's, a policy change's or a monitor's own entry: no decision
            decision_id = doc["decision_id"]
            state = State(
                timestamp=_instant(doc["timestamp"], end=False),
                user_id=doc["user_id"],
                model_id=doc.get("model_id"),
                ai_recommendation=doc["ai_recommendation"],
                ai_confidence=doc.get("ai_confidence"),
                user_decision=doc["user_decision"],
                outcome=doc.get("outcome"),
                erased=doc.get("erased") is True,
                probe=doc.get("probe") is not None,
                initial_decision=doc.get("initial_decision"),
                initial_hashed="initial_decision" in doc,
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise Unreadable(f"export line {number} is not an audit entry: {short(exc)}") from exc
        if decision_id is not None:
            state.probe = state.probe or (decision_id in states and states[decision_id].probe)
            states[decision_id] = state
    yield from states.values()


@dataclass
class Recomputed:
    figures: measures.Figures
    erased: int  # decisions of the window whose entries were erased
    by_filter: bool  # the report's reviewer filter could not be applied to them
    probes: int = 0  # vigilance probes of the window, left out of every figure
    users: dict[str, measures.Figures] = field(default_factory=dict)  # each reviewer's figures
    initial_hashed: bool = True  # every decision of the window hashed its initial decision


@dataclass(frozen=True)
class _Window:
    """The report's window and filters, as they select decisions."""

    start: dt.datetime
    end: dt.datetime
    users: frozenset[str]
    models: frozenset[str | None]
    categories: frozenset[str]

    # a JSON document by name (a report), whose members are read as found
    @classmethod
    def of(cls, report: JSONObject) -> "_Window":
        section = report["sections"].get("trust_calibration_analysis") or {}
        window = section.get("window") or report["time_period"]
        filters = report.get("filters") or {}
        return cls(
            start=_instant(window["from"], end=False),
            end=_instant(window["to"], end="T" not in window["to"]),
            users=frozenset(filters.get("user_ids") or []),
            models=frozenset(filters.get("model_ids") or []),
            categories=frozenset(filters.get("calibration") or []),
        )

    def filtered_out(self, state: State) -> bool:
        return bool(self.users and state.user_id not in self.users) or bool(
            self.models and state.model_id not in self.models
        )


def _record(state: State) -> measures.Record:
    category = measures.record_category(
        ai_recommendation=state.ai_recommendation,
        user_decision=state.user_decision,
        confidence=state.ai_confidence,
        outcome=state.outcome,
    )
    return measures.Record(
        state.ai_recommendation,
        state.user_decision,
        state.ai_confidence,
        state.outcome,
        state.initial_decision,
        category,
    )


# a JSON document by name (a report), whose members are read as found
def _recalibration(report: JSONObject) -> measures_stats.Recalibrate | None:
    """p' from the fit the report prints when its confidence check found the AI's confidence
    miscalibrated (docs/reference/calibration.md, A miscalibrated confidence); the fit itself is
    the report's, not re-derived here."""
    sections = report["sections"]
    where = sections.get("trust_calibration_analysis") or sections.get("performance_and_limitations") or {}
    check = where.get("confidence_check") or {}
    if check.get("verdict") != "miscalibrated":
        return None
    return measures_stats.recalibration(check["intercept"], check["slope"])


# a JSON document by name (an entry, a report), whose members are read as found
def recompute(report: JSONObject, lines: Iterable[str]) -> Recomputed:
    """The organisation's and each reviewer's figures over the report's period and filters, from
    the export, vigilance probes left out (docs/reference/oversight.md: probes enter no figure)."""
    window = _Window.of(report)
    recalibrate = _recalibration(report)
    per_user: dict[str | None, dict[str, float]] = defaultdict(lambda: dict.fromkeys(measures.SUM_FIELDS, 0))
    erased = probes = 0
    initial_hashed = True
    for state in decisions_of(lines):
        if not window.start <= state.timestamp < window.end:
            continue
        erased += state.erased
        if window.filtered_out(state):
            continue
        probes += state.probe
        record = _record(state)
        if state.probe or (window.categories and record.category not in window.categories):
            continue
        initial_hashed = initial_hashed and state.initial_hashed
        sums = per_user[state.user_id]
        for name, value in measures.contribution(record, recalibrate).items():
            sums[name] += value
    total = measures.add_sums(per_user.values())
    over = measures.Clusters.of((u["fwo_sum"], u["wo_sum"]) for u in per_user.values())
    under = measures.Clusters.of((u["uwu_sum"], u["wu_sum"]) for u in per_user.values())
    th = measures.Thresholds()
    again = recalibrate is not None
    figures = measures.figures(total, th, over_clusters=over, under_clusters=under, recalibrated=again)
    reviewers = {
        user_id: measures.figures(sums, th, recalibrated=again)
        for user_id, sums in per_user.items()
        if user_id is not None
    }
    return Recomputed(
        figures,
        erased,
        by_filter=bool(window.users) and erased > 0,
        probes=probes,
        users=reviewers,
        initial_hashed=initial_hashed,
    )


# a report's figure and its recomputation: JSON values of any shape
def same(reported: JSONValue, recomputed: JSONValue) -> bool:
    if isinstance(reported, list) and isinstance(recomputed, list):
        return len(reported) == len(recomputed) and all(map(same, reported, recomputed))
    if isinstance(reported, bool) or isinstance(recomputed, bool):
        return bool(reported == recomputed)
    if isinstance(reported, int | float) and isinstance(recomputed, int | float):
        return math.isclose(reported, recomputed, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    return bool(reported == recomputed)


# Where each template prints the figures it re-derives: (figure path, the recomputed figure's name).
# a JSON document by name (a report), whose members are read as found
def _pairs(report: JSONObject) -> list[tuple[str, str, JSONValue]]:
    sections = report["sections"]
    pairs = []
    if report["template"] == "eu_ai_act":
        summary = sections["executive_summary"]
        pairs += [
            (f"executive_summary.{key}", SUMMARY_SOURCE.get(key, key), summary[key])
            for key in SUMMARY_FIGURES
            if key in summary
        ]
        where = "trust_calibration_analysis"
        organisation = sections[where]["organisation"]
    else:  # texas_traiga: the same evidence, organised by what the Texas Act asks
        for path, source in TEXAS_FIGURES:
            section, key = path.split(".")
            if key in sections.get(section, {}):
                pairs.append((path, source, sections[section][key]))
        where = "performance_and_limitations"
        organisation = sections[where]["organisation"]
    pairs += [
        (f"{where}.{key}", key, organisation[key])
        for key in [*ORGANISATION_FIGURES, *INITIAL_DECISION_FIGURES]
        if key in organisation
    ]
    return pairs


# a report document and its rows, JSON by name
def _users_of(report: JSONObject) -> tuple[str, list[JSONObject]]:
    where = "trust_calibration_analysis" if report["template"] == "eu_ai_act" else "monitoring_and_safeguards"
    return where, report["sections"].get(where, {}).get("users") or []


# a JSON document by name (an entry, a report), whose members are read as found
def compare(
    report: JSONObject, recomputed: Recomputed
) -> list[tuple[str, JSONValue, JSONValue, bool | None]]:
    """(figure, reported, recomputed, match) for the headline figures and every reviewer's;
    match is None where erased entries make a figure not recomputable."""
    figures: Mapping[str, object] = recomputed.figures  # read by the report's names
    rows: list[tuple[str, Any, Any, bool | None]] = []  # Any: the figures' JSON values, as read
    for name, source, reported in _pairs(report):
        unknown = (
            recomputed.by_filter
            or (recomputed.erased > 0 and source in BY_REVIEWER)
            or (source in INITIAL_DECISION_FIGURES and not recomputed.initial_hashed)
        )
        rows.append((name, reported, figures[source], None if unknown else same(reported, figures[source])))
    where, users = _users_of(report)
    th = measures.Thresholds()
    for user in users:
        user_id = str(user.get("user_id"))
        theirs = recomputed.users.get(user_id)
        mine: dict[str, object] | None = None  # read by the report's names
        if theirs is not None:
            mine = {**theirs, "at_risk": measures.is_risk_user(theirs, th)}
        for key in [*USER_FIGURES, *INITIAL_DECISION_FIGURES]:
            if key not in user:
                continue
            # An erased decision no longer names its reviewer: with erasures in the window no
            # reviewer's figures can be re-derived (their pseudonym names no one in the export).
            unknown = recomputed.erased > 0 or recomputed.by_filter
            unknown = unknown or (key in INITIAL_DECISION_FIGURES and not recomputed.initial_hashed)
            value = None if mine is None else mine.get(key)
            ok = None if unknown else mine is not None and same(user[key], value)
            rows.append((f"{where}.users[{user_id}].{key}", user[key], value, ok))
    return rows


RESULT = {True: "match", False: "MISMATCH", None: "not recomputable"}


# a JSON value of any shape
def _shown(value: JSONValue) -> str:
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return "null" if value is None else str(value)


def run(report_path: str, export_path: str, out: TextIO) -> int:
    try:
        report = strict_loads(Path(report_path).read_text(encoding="utf-8"))
        if report.get("template") not in ("eu_ai_act", "texas_traiga") or "sections" not in report:
            raise Unreadable(f"{report_path} is not a report in the json format (eu_ai_act or texas_traiga)")
        with open(export_path, encoding="utf-8", newline="\n") as export:
            recomputed = recompute(report, export)
    except (OSError, ValueError, KeyError, RecursionError, AttributeError) as exc:
        print(f"cannot read the inputs: {short(exc)}", file=out)
        return 2
    except Unreadable as exc:
        print(str(exc), file=out)
        return 2
    rows = compare(report, recomputed)
    width = max(len(name) for name, *_ in rows)
    print(f"{'figure':<{width}}  {'report':>24}  {'recomputed':>24}  result", file=out)
    for name, reported, value, ok in rows:
        print(f"{name:<{width}}  {_shown(reported):>24}  {_shown(value):>24}  {RESULT[ok]}", file=out)
    if recomputed.erased:
        print(
            f"{recomputed.erased} decision(s) of the window had their personal fields erased: their "
            "reviewers are not in the export, so "
            + (
                "the report's reviewer filter cannot be applied to them and no figure is recomputable."
                if recomputed.by_filter
                else "the figures that group decisions by reviewer are not recomputable."
            ),
            file=out,
        )
    print(
        f"{recomputed.probes} vigilance probe(s) of the window were left out of every figure, as the "
        "service leaves them out (docs/reference/oversight.md).",
        file=out,
    )
    if report["template"] == "eu_ai_act":
        status = report["sections"]["executive_summary"].get("compliance_status")
        print(
            f"compliance_status {status}: its calibration inputs are checked above; the alerts and the "
            "review-effort flags it also rests on are not in the export.",
            file=out,
        )
    return _verdict(rows, out)


# a figure as printed and as re-derived, of whatever JSON type
def _verdict(rows: list[tuple[str, JSONValue, JSONValue, bool | None]], out: TextIO) -> int:
    """The last line: every figure matches (exit 0), or how many differ and which (exit 1)."""
    differ = [name for name, *_, ok in rows if ok is False]
    checked = sum(1 for *_, ok in rows if ok is not None)
    unknown = len(rows) - checked
    aside = f" ({unknown} not recomputable, named above)" if unknown else ""
    if differ:
        print(f"{len(differ)} figures differ: {', '.join(differ)}{aside}", file=out)
        return 1
    if not checked:
        print(f"no figure differs, and none could be checked{aside}", file=out)
        return 0
    print(f"all {checked} figures match{aside}", file=out)
    return 0


def main(argv: list[str], out: TextIO) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m audit.offline_verify --report",
        description="Re-derive a report's figures from the export.",
    )
    parser.add_argument("report", help="the EU AI Act report in the json format")
    parser.add_argument("export", help="the NDJSON export (GET /audit-trail/export)")
    args = parser.parse_args(argv)
    return run(args.report, args.export, out)
