"""An auditor's recomputation of every drift monitor's chart from the audit-trail export alone: no
database, no Django, no access to the service (docs/reference/drift.md, Verifying a chart
offline).

    python3 -m audit.offline_verify --drift EXPORT.ndjson [SERIES.json ...]

EXPORT is GET /audit-trail/export from the first entry (verify it first with offline_verify's
checkpoint mode). `drift.replay` reads it in `sequence` order and recomputes each monitor with
the service's own code (its baseline, follow model and chart, the restarts of its entries), and
checks every `drift_monitor.baseline_completed`, `drift_alarm.raised` and `probe_sprt.concluded`
entry against the recomputation, and that none is missing. Each SERIES is the JSON of
GET /drift-monitors/{id}/series (one page, or a list of pages): its points are compared one by
one with the recomputed ones. Exit status 0 when everything matches, 1 on a mismatch, 2 when an
input could not be read.
"""

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from audit.jsondoc import JSONObject
from drift.replay import Monitor, Replay, same_value, served_time

SERIES_FIELDS = {
    "cusum": (
        "sequence",
        "decision_id",
        "user_id",
        "ai_confidence",
        "event",
        "p",
        "w",
        "x",
        "restart",
        "signal",
    ),
    "sprt": ("sequence", "decision_id", "user_id", "event", "llr", "llr_sum", "restart", "conclusion"),
}


class Unreadable(Exception):
    """An input that is not what it should be (exit status 2)."""


# an export line's members, read as found
def entries(path: str) -> Iterator[JSONObject]:
    try:
        with open(path, encoding="utf-8", newline="\n") as export:
            for number, line in enumerate(export, start=1):
                if not line.strip():
                    continue
                try:
                    doc = json.loads(line)
                except ValueError as exc:
                    raise Unreadable(f"export line {number} is not JSON ({exc})") from exc
                if not isinstance(doc, dict) or not isinstance(doc.get("sequence"), int):
                    raise Unreadable(f"export line {number} is not an audit entry")
                yield doc
    except (OSError, UnicodeDecodeError) as exc:
        raise Unreadable(f"{path}: cannot be read ({exc})") from exc


def replay(path: str) -> Replay:
    """The export read twice: its monitors' creation entries first (a `previous` baseline is
    made of the points before its creation), then every entry in order."""
    creations = [doc for doc in entries(path) if doc.get("type") == "drift_monitor.configured"]
    return Replay(creations).run(entries(path))


# a series page's points, read as found
def series_points(paths: list[str]) -> dict[str, list[JSONObject]]:
    """The points of each monitor's series files, by monitor id."""
    out: dict[str, list[dict[str, Any]]] = {}  # Any: the served points' JSON, read by name
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise Unreadable(f"{path}: not a JSON file ({exc})") from exc
        for page in doc if isinstance(doc, list) else [doc]:
            if (
                not isinstance(page, dict)
                or not isinstance(page.get("data"), list)
                or "monitor_id" not in page
            ):
                raise Unreadable(f"{path}: not the JSON of GET /drift-monitors/{{id}}/series")
            out.setdefault(page["monitor_id"], []).extend(page["data"])
    return out


# a series point as served
def compare_series(monitor: Monitor, served: list[JSONObject]) -> list[str]:
    problems = []
    fields = SERIES_FIELDS["sprt" if monitor.chart == "probe_sprt" else "cusum"]
    for point in served:
        index = point.get("index")
        if not isinstance(index, int) or not 0 < index <= len(monitor.points):
            problems.append(
                f"series point {index!r}: no such point recomputed ({len(monitor.points)} points)"
            )
            continue
        ours = monitor.points[index - 1]
        expected = {name: value for name, value in ours.wire().items() if name in fields}
        expected["timestamp"] = served_time(ours.point.timestamp)
        expected["alarm_id"] = monitor.alarm_id(index)
        for name, value in expected.items():
            if not same_value(point.get(name), value):
                problems.append(f"series point {index}: {name} is {point.get(name)!r}, recomputed {value!r}")
    return problems


def describe(monitor: Monitor) -> str:
    scope = monitor.data.get("user_id") if monitor.data.get("scope") == "user" else "organization"
    return f"monitor {monitor.monitor_id} ({monitor.chart}, {scope})"


def run(export: str, series_paths: list[str], out: TextIO) -> int:
    try:
        replayed = replay(export)
        served = series_points(series_paths)
    except Unreadable as exc:
        print(f"CANNOT VERIFY: {exc}", file=out)
        return 2
    failed = False
    for monitor_id in served.keys() - replayed.monitors.keys():
        print(f"MISMATCH: a series of {monitor_id}, which the export does not configure", file=out)
        failed = True
    for monitor in replayed.monitors.values():
        if monitor.not_recomputable:
            print(f"NOT RECOMPUTABLE: {describe(monitor)}: {monitor.not_recomputable}", file=out)
            continue
        problems = (
            monitor.problems + monitor.missing() + compare_series(monitor, served.get(monitor.monitor_id, []))
        )
        alarms = sum(1 for p in monitor.points if p.alarm is not None and p.alarm.new_alarm)
        compared = len(served.get(monitor.monitor_id, []))
        summary = (
            f"{describe(monitor)}: {len(monitor.points)} points, {alarms} alarm(s), "
            f"{monitor.checked} drift entries checked, {compared} series points compared"
        )
        if problems:
            failed = True
            print(f"MISMATCH: {summary}", file=out)
            for problem in problems[:50]:
                print(f"  {problem}", file=out)
            if len(problems) > 50:
                print(f"  ... and {len(problems) - 50} more", file=out)
        else:
            print(f"OK: {summary}", file=out)
    print(f"{len(replayed.monitors)} monitor(s) recomputed from the export", file=out)
    return 1 if failed else 0


def main(argv: list[str], out: TextIO) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m audit.offline_verify --drift",
        description="Recompute every drift monitor's chart from the export.",
    )
    parser.add_argument("export", help="the NDJSON export (GET /audit-trail/export)")
    parser.add_argument("series", nargs="*", help="GET /drift-monitors/{id}/series answers to compare")
    args = parser.parse_args(argv)
    return run(args.export, args.series, out)
