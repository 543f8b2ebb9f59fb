"""An auditor's re-derivation of a report's figures from the audit-trail export alone: no
database, no Django, no access to the service.

    python3 -m audit.offline_verify --report REPORT.json EXPORT.ndjson

REPORT is an EU AI Act report in the json format (GET /export/:id/download); EXPORT is
GET /audit-trail/export from the first entry (verify it first with offline_verify's checkpoint
mode). From the export's decision and outcome entries this rebuilds every decision as it stood,
keeps those of the report's period and filters, recomputes the calibration figures with the
service's own formulas (`audit/measures.py`, docs/reference/calibration.md) and prints, for each
figure of the executive summary and the trust-calibration headline, the report's value, the
recomputed value and whether they match. Exit status 0 when every figure matches, 1 on a
mismatch, 2 when an input could not be read. The compliance status also rests on the alerts and
the review-effort flags, which the export does not hold: its evidence figures are checked, the
status itself is printed as not recomputable. An erased entry no longer names its reviewer, so
with erased decisions in the window the figures that group decisions by reviewer are printed as
not recomputable (all of them under a reviewer filter), and the rest are checked
(docs/reference/reports.md, "How to verify a report", step 5).
"""

import argparse
import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from audit import measures
from audit.hashing import strict_loads
from audit.offline_inputs import short

TOLERANCE = 1e-9  # the report's figures are stored unrounded; only float summation order may differ
SUMMARY_FIGURES = [
    "total_decisions",
    "scored_decisions",
    "unscored_decisions",
    "coverage",
    "automation_bias_incidents",
    "automation_bias_rate",
    "human_override_rate",
    "trust_score",
    "attainable_score",
    "reliance_gap",
    "reliance_skill",
    "overtrust_rate",
    "overtrust_rate_ci",
    "overtrust_effective_n",
    "category",
]
ORGANISATION_FIGURES = [
    "decisions",
    "scored_decisions",
    "agreement_rate",
    "override_rate",
    "mean_ai_confidence",
    "calibration_gap",
    "trust_score",
    "attainable_score",
    "reliance_gap",
    "reliance_skill",
    "overtrust_rate",
    "overtrust_effective_n",
    "overtrust_rate_ci",
    "undertrust_rate",
    "undertrust_effective_n",
    "undertrust_rate_ci",
    "category",
    "risk_level",
    "ai_accuracy",
    "overreliance_rate",
    "underreliance_rate",
]
# The summary's names for the organisation's figures where they differ.
SUMMARY_SOURCE = {"total_decisions": "decisions", "human_override_rate": "override_rate"}


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
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise Unreadable(f"export line {number} is not an audit entry: {short(exc)}") from exc
        if decision_id is not None:
            states[decision_id] = state
    yield from states.values()


# Figures that group decisions by reviewer (the effective n of the weighted rates and what rests
# on their intervals): an erased entry's reviewer is not in the export, so with erased decisions in
# the window these cannot be recomputed (every other figure is a sum over decisions).
BY_REVIEWER = {
    "overtrust_effective_n",
    "overtrust_rate_ci",
    "undertrust_effective_n",
    "undertrust_rate_ci",
    "category",
    "risk_level",
}


@dataclass
class Recomputed:
    figures: dict[str, Any]
    erased: int  # decisions of the window whose entries were erased
    by_filter: bool  # the report's reviewer filter could not be applied to them


# Any: a JSON document by name (an entry, a report), whose members are read as found
def recompute(report: dict[str, Any], lines: Iterable[str]) -> Recomputed:
    """The organisation's figures over the report's period and filters, from the export."""
    section = report["sections"]["trust_calibration_analysis"]
    window = section.get("window") or report["time_period"]
    start, end = _instant(window["from"], end=False), _instant(window["to"], end="T" not in window["to"])
    filters = report.get("filters") or {}
    users, models = set(filters.get("user_ids") or []), set(filters.get("model_ids") or [])
    categories = set(filters.get("calibration") or [])
    per_user: dict[str | None, dict[str, float]] = defaultdict(lambda: dict.fromkeys(measures.SUM_FIELDS, 0))
    erased = 0
    for state in decisions_of(lines):
        if not start <= state.timestamp < end:
            continue
        erased += state.erased
        if (users and state.user_id not in users) or (models and state.model_id not in models):
            continue
        category = measures.record_category(
            ai_recommendation=state.ai_recommendation,
            user_decision=state.user_decision,
            confidence=state.ai_confidence,
            outcome=state.outcome,
        )
        if categories and category not in categories:
            continue
        record = measures.Record(
            state.ai_recommendation, state.user_decision, state.ai_confidence, state.outcome, None, category
        )
        sums = per_user[state.user_id]
        for name, value in measures.contribution(record).items():
            sums[name] += value
    total = measures.add_sums(per_user.values())
    over = measures.Clusters.of((u["fwo_sum"], u["wo_sum"]) for u in per_user.values())
    under = measures.Clusters.of((u["uwu_sum"], u["wu_sum"]) for u in per_user.values())
    figures = measures.figures(total, measures.Thresholds(), over_clusters=over, under_clusters=under)
    return Recomputed(figures, erased, by_filter=bool(users) and erased > 0)


# Any: a report's figure and its recomputation: JSON values of any shape
def same(reported: Any, recomputed: Any) -> bool:
    if isinstance(reported, list) and isinstance(recomputed, list):
        return len(reported) == len(recomputed) and all(map(same, reported, recomputed))
    if isinstance(reported, bool) or isinstance(recomputed, bool):
        return bool(reported == recomputed)
    if isinstance(reported, int | float) and isinstance(recomputed, int | float):
        return math.isclose(reported, recomputed, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    return bool(reported == recomputed)


# Any: a JSON document by name (an entry, a report), whose members are read as found
def compare(report: dict[str, Any], recomputed: Recomputed) -> list[tuple[str, Any, Any, bool | None]]:
    """(figure, reported, recomputed, match) for the executive summary and the headline figures;
    match is None where erased entries make a figure not recomputable."""
    figures = recomputed.figures
    pairs = []
    summary = report["sections"]["executive_summary"]
    for key in SUMMARY_FIGURES:
        if key in summary:
            pairs.append((f"executive_summary.{key}", SUMMARY_SOURCE.get(key, key), summary[key]))
    organisation = report["sections"]["trust_calibration_analysis"]["organisation"]
    for key in ORGANISATION_FIGURES:
        if key in organisation:
            pairs.append((f"trust_calibration_analysis.{key}", key, organisation[key]))
    rows: list[tuple[str, Any, Any, bool | None]] = []
    for name, source, reported in pairs:
        unknown = recomputed.by_filter or (recomputed.erased > 0 and source in BY_REVIEWER)
        ok = None if unknown else same(reported, figures[source])
        rows.append((name, reported, figures[source], ok))
    return rows


RESULT = {True: "match", False: "MISMATCH", None: "not recomputable"}


# Any: a JSON value of any shape
def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return "null" if value is None else str(value)


def run(report_path: str, export_path: str, out: TextIO) -> int:
    try:
        report = strict_loads(Path(report_path).read_text(encoding="utf-8"))
        if report.get("template") != "eu_ai_act" or "sections" not in report:
            raise Unreadable(f"{report_path} is not an EU AI Act report in the json format")
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
    status = report["sections"]["executive_summary"].get("compliance_status")
    print(
        f"compliance_status {status}: not recomputable from the export (it also rests on the alerts and the "
        "review-effort flags); its calibration evidence is checked above.",
        file=out,
    )
    mismatches = sum(1 for *_, ok in rows if ok is False)
    matches = sum(1 for *_, ok in rows if ok is True)
    print(
        f"{matches} of {len(rows)} figures match"
        + (f"; {mismatches} MISMATCH" if mismatches else "")
        + (f"; {unknown} not recomputable" if (unknown := len(rows) - matches - mismatches) else ""),
        file=out,
    )
    return 1 if mismatches else 0


def main(argv: list[str], out: TextIO) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m audit.offline_verify --report",
        description="Re-derive a report's figures from the export.",
    )
    parser.add_argument("report", help="the EU AI Act report in the json format")
    parser.add_argument("export", help="the NDJSON export (GET /audit-trail/export)")
    args = parser.parse_args(argv)
    return run(args.report, args.export, out)
