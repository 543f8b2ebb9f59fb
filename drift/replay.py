"""A customer's audit chain replayed in `sequence` order, every drift monitor recomputed from it
(docs/reference/drift.md, Verifying a chart offline): the monitors from their
`drift_monitor.configured` entries, their baselines and follow models, and their charts point by
point with `drift.engine`, with the restarts of the `drift_monitor.calibrated` and
`drift_alarm.acknowledged` entries. Each `drift_monitor.baseline_completed`, `drift_alarm.raised`
and `probe_sprt.concluded` entry is checked against the recomputation as it is read. Free of
Django and the database: the offline verifier (`audit/offline_verify.py --drift`) runs it on an
export, and tests run it on the chain the service wrote.
"""

import datetime as dt
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from audit.measures import same
from config.jsondoc import JSONObject, JSONValue
from drift.charts import (
    AI_CALIBRATION_CHARTS,
    PROBE_SPRT,
    RELIANCE_CHARTS,
    UNDER_RELIANCE,
    Fit,
    Sprt,
    event,
    fit_follow_model,
)
from drift.engine import ChartPoint, ChartState, Point, Spec, acknowledged, advance, restart

NUMBER_TOLERANCE = 1.5e-6  # figures served to 6 places; the last place may differ by the sum's order


# an export line's members, read as found
Entry = JSONObject


@dataclass
class Monitor:
    monitor_id: str
    chart: str
    configured_sequence: int
    data: Entry  # its latest drift_monitor.configured data
    status: str = "baseline"
    baseline: list[tuple[float | None, int, int]] = field(default_factory=list)  # (c, e, sequence)
    fit: Fit | None = None
    state: ChartState = field(default_factory=ChartState)
    points: list[ChartPoint] = field(default_factory=list)
    raised_by: dict[int, int] = field(default_factory=dict)  # signal index -> index that raised its alarm
    alarm_ids: dict[int, str] = field(default_factory=dict)  # raising index -> alarm_id (from entries)
    concluded: set[int] = field(default_factory=set)  # indexes with a probe_sprt.concluded entry
    conclusion_alarms: list[tuple[int, int, str | None]] = field(
        default_factory=list
    )  # (entry, index, alarm)
    checked: int = 0  # drift entries checked against the recomputation
    problems: list[str] = field(default_factory=list)
    not_recomputable: str | None = None

    def spec(self) -> Spec:
        sprt = self.data.get("sprt")
        return Spec(
            chart=self.chart,
            odds_ratio=float(self.data.get("odds_ratio") or 2.0),
            h=self.data.get("h"),
            fit=self.fit,
            sprt=Sprt(sprt["p0"], sprt["p1"], sprt["alpha"], sprt["beta"]) if sprt else None,
        )

    def alarm_id(self, index: int) -> str | None:
        """The alarm a point raised or signalled again (known once its raised entry is read)."""
        opened = self.raised_by.get(index)
        return None if opened is None else self.alarm_ids.get(opened)

    def missing(self) -> list[str]:
        """Alarms and conclusions recomputed that no entry of the chain records."""
        out = []
        for point in self.points:
            if point.alarm is not None and point.alarm.new_alarm and point.index not in self.alarm_ids:
                out.append(
                    f"point {point.index} (entry {point.point.sequence}) raises an alarm the chain does not record"
                )
            if point.conclusion is not None and point.index not in self.concluded:
                out.append(
                    f"probe {point.index} (entry {point.point.sequence}) concludes {point.conclusion}, not recorded"
                )
        for sequence, index, alarm_id in self.conclusion_alarms:
            if alarm_id != self.alarm_id(index):
                out.append(f"entry {sequence}: alarm_id is {alarm_id!r}, recomputed {self.alarm_id(index)!r}")
        return out

    def baseline_size(self) -> int | None:
        baseline = self.data.get("baseline")
        return int(baseline["decisions"]) if baseline else None

    def matches(self, entry: Entry) -> bool:
        data = self.data
        if data.get("scope") == "user" and entry.get("user_id") != data.get("user_id"):
            return False
        if data.get("model_id") is not None and entry.get("model_id") != data["model_id"]:
            return False
        return data.get("model_version") is None or entry.get("model_version") == data["model_version"]


class Replay:
    """The chain read once in order, each monitor's chart recomputed as it goes."""

    def __init__(self, creations: Iterable[Entry] = ()) -> None:
        """`creations`: the chain's `drift_monitor.configured` creation entries, read ahead, so the
        points before a `previous` baseline's creation entry can be kept for it."""
        self.monitors: dict[str, Monitor] = {}
        self.outcome_known: set[str] = set()
        # `previous` baselines: each such monitor's last N eligible points before its creation
        self.pending: dict[str, Monitor] = {}
        self.previous: dict[str, deque[tuple[float | None, int, int]]] = {}
        for doc in creations:
            baseline = doc.get("baseline") or {}
            if doc.get("action") == "created" and baseline.get("mode") == "previous":
                self.pending[doc["monitor_id"]] = Monitor(
                    doc["monitor_id"], doc["chart"], doc["sequence"], doc
                )
                self.previous[doc["monitor_id"]] = deque(maxlen=int(baseline["decisions"]))

    def run(self, entries: Iterable[Entry]) -> "Replay":
        for doc in entries:
            self.entry(doc)
        return self

    def entry(self, doc: Entry) -> None:
        kind = doc.get("type")
        if kind in ("decision", "outcome"):
            self._point_entry(doc)
        elif kind == "drift_monitor.configured":
            self._configured(doc)
        elif kind == "drift_monitor.baseline_completed":
            self._baseline_completed(doc)
        elif kind == "drift_monitor.calibrated":
            monitor = self._monitor(doc)
            if monitor:
                monitor.data = {**monitor.data, "h": doc["h"], "h_source": "calibrated"}
                monitor.status = "live" if monitor.status != "paused" else "paused"
                restart(monitor.state)
        elif kind == "drift_alarm.raised":
            self._raised(doc)
        elif kind == "drift_alarm.acknowledged":
            monitor = self._monitor(doc)
            if monitor:
                acknowledged(monitor.state)
        elif kind == "probe_sprt.concluded":
            self._concluded(doc)

    def _monitor(self, doc: Entry) -> Monitor | None:
        return self.monitors.get(doc.get("monitor_id", ""))

    # --- points -------------------------------------------------------------------------------
    def _point_entry(self, doc: Entry) -> None:
        decision_id, probe = doc.get("decision_id"), doc.get("probe")
        first_outcome = False
        if doc.get("outcome") is not None and decision_id not in self.outcome_known:
            first_outcome = True
            self.outcome_known.add(str(decision_id))
        for monitor_id, shell in self.pending.items():
            found = _eligible(shell, doc, probe, first_outcome)
            if found is not None:
                self.previous[monitor_id].append((doc.get("ai_confidence"), found, doc["sequence"]))
        for monitor in self.monitors.values():
            if monitor.status in ("paused", "deleted") or monitor.not_recomputable:
                continue
            e = _eligible(monitor, doc, probe, first_outcome)
            if e is None:
                continue
            if doc.get("erased") and monitor.data.get("scope") == "user":
                monitor.not_recomputable = "an erased entry hides whether it names the monitor's reviewer"
                continue
            self._point(monitor, doc, e)

    def _point(self, monitor: Monitor, doc: Entry, e: int) -> None:
        size = monitor.baseline_size()
        if monitor.status == "baseline" and size is not None:
            monitor.baseline.append((doc.get("ai_confidence"), e, doc["sequence"]))
            if len(monitor.baseline) == size:
                self._complete(monitor)
            return
        if monitor.data.get("h") is None and monitor.chart != PROBE_SPRT:
            return  # calibrating: not charted
        monitor.status = "live"
        point = Point(
            doc["sequence"],
            doc["decision_id"],
            doc.get("user_id"),
            _time(doc["timestamp"]),
            doc.get("ai_confidence"),
            e,
        )
        charted = advance(monitor.spec(), monitor.state, point)
        monitor.points.append(charted)
        if charted.alarm is not None:
            opened = charted.index if charted.alarm.new_alarm else _last_raising(monitor)
            monitor.raised_by[charted.index] = opened

    def _complete(self, monitor: Monitor) -> None:
        if monitor.chart in RELIANCE_CHARTS:
            # the baseline keeps each point's event e; the fit is of following (e = 1 - f when
            # the chart watches overriding)
            flip = monitor.chart == UNDER_RELIANCE
            points = [(c, 1 - e if flip else e) for c, e, _ in monitor.baseline if c is not None]
            if not points:
                monitor.not_recomputable = "its baseline holds no point of the chain"
                return
            monitor.fit = fit_follow_model(points)
        monitor.status = "live" if monitor.data.get("h") is not None else "calibrating"

    # --- configuration ------------------------------------------------------------------------
    def _configured(self, doc: Entry) -> None:
        action, monitor_id = doc.get("action"), doc["monitor_id"]
        if action == "created":
            monitor = Monitor(monitor_id, doc["chart"], doc["sequence"], doc)
            self.monitors[monitor_id] = monitor
            if doc.get("user_id") is None and doc.get("scope") == "user":
                monitor.not_recomputable = "its reviewer was erased"
            baseline = doc.get("baseline")
            if monitor.chart == PROBE_SPRT or not baseline:
                monitor.status = "live"
            elif baseline.get("mode") == "previous":
                monitor.baseline = list(self.previous.pop(monitor_id, deque()))
                self.pending.pop(monitor_id, None)
                self._complete(monitor)
            if not doc.get("enabled", True):
                monitor.status = "paused"
            return
        existing = self.monitors.get(monitor_id)
        if existing is not None:
            self._changed(existing, doc)

    def _changed(self, monitor: Monitor, doc: Entry) -> None:
        changes = set(doc.get("changes") or [])
        was_paused = monitor.status == "paused"
        monitor.data = doc
        if doc.get("action") == "deleted":
            monitor.status = "deleted"
        elif "enabled" in changes and not doc.get("enabled"):
            monitor.status = "paused"
        else:
            if was_paused and doc.get("enabled"):
                monitor.status = _resumed_status(monitor)
                if monitor.chart != PROBE_SPRT:
                    restart(monitor.state)
            if "h" in changes:
                restart(monitor.state)

    def _baseline_completed(self, doc: Entry) -> None:
        monitor = self._monitor(doc)
        if monitor is None or monitor.not_recomputable:
            return
        monitor.checked += 1
        baseline = doc.get("baseline") or {}
        ours = {
            "first_sequence": monitor.baseline[0][2] if monitor.baseline else None,
            "last_sequence": monitor.baseline[-1][2] if monitor.baseline else None,
            "fit": monitor.fit.as_dict() if monitor.fit else None,
        }
        for name, value in ours.items():
            if baseline.get(name) != value:
                monitor.problems.append(
                    f"entry {doc['sequence']}: baseline {name} is {baseline.get(name)!r}, recomputed {value!r}"
                )

    # --- alarms and conclusions ---------------------------------------------------------------
    def _raised(self, doc: Entry) -> None:
        monitor = self._monitor(doc)
        if monitor is None or monitor.not_recomputable:
            return
        monitor.checked += 1
        index = doc.get("point_index")
        point = (
            monitor.points[index - 1] if isinstance(index, int) and 0 < index <= len(monitor.points) else None
        )
        if point is None or point.alarm is None or not point.alarm.new_alarm:
            monitor.problems.append(f"entry {doc['sequence']}: an alarm at point {index}, which raised none")
            return
        monitor.alarm_ids[point.index] = doc["alarm_id"]
        alarm = point.alarm
        run = alarm.run.as_dict()
        for key in ("decision_time_from", "decision_time_to"):
            run[key] = served_time(run[key])
        expected = {
            "decision_id": point.point.decision_id,
            "decision_sequence": point.point.sequence,
            "statistic": round(alarm.statistic, 6),
            "threshold": alarm.threshold if monitor.chart != PROBE_SPRT else round(alarm.threshold, 6),
            "excess": round(alarm.excess, 4),
            "severity": alarm.severity,
            "run": run,
        }
        _compare(monitor, doc, expected)

    def _concluded(self, doc: Entry) -> None:
        monitor = self._monitor(doc)
        if monitor is None or monitor.not_recomputable:
            return
        monitor.checked += 1
        index = doc.get("point_index")
        point = (
            monitor.points[index - 1] if isinstance(index, int) and 0 < index <= len(monitor.points) else None
        )
        if point is None or point.conclusion is None or point.run is None or point.llr_sum is None:
            monitor.problems.append(
                f"entry {doc['sequence']}: a conclusion at probe {index}, which concluded nothing"
            )
            return
        monitor.concluded.add(point.index)
        expected = {
            "conclusion": point.conclusion,
            "probes": point.run.points,
            "misses": point.run.misses,
            "llr_sum": round(point.llr_sum, 6),
            "decision_id": point.point.decision_id,
            "decision_sequence": point.point.sequence,
        }
        _compare(monitor, doc, expected)
        if point.conclusion == "h1":  # its alarm's raised entry follows it: checked at the end
            monitor.conclusion_alarms.append((doc["sequence"], point.index, doc.get("alarm_id")))


def _eligible(monitor: Monitor, doc: Entry, probe: JSONValue, first_outcome: bool) -> int | None:  # JSON
    """The point's event e for the monitor's chart, or None when the entry is not its point."""
    if not monitor.matches(doc):
        return None
    chart = monitor.chart
    if chart == PROBE_SPRT:
        if doc.get("type") == "decision" and isinstance(probe, dict) and probe.get("kind") == "known_wrong":
            return event(chart, followed=bool(doc.get("followed_ai")))
        return None
    if probe is not None or doc.get("ai_confidence") is None:
        return None
    if chart in RELIANCE_CHARTS:
        return event(chart, followed=bool(doc.get("followed_ai"))) if doc.get("type") == "decision" else None
    if chart in AI_CALIBRATION_CHARTS and first_outcome:
        return event(chart, ai_right=same(doc.get("outcome"), doc.get("ai_recommendation")))
    return None


def _last_raising(monitor: Monitor) -> int:
    return max((i for i, opened in monitor.raised_by.items() if opened == i), default=0)


def _resumed_status(monitor: Monitor) -> str:
    size = monitor.baseline_size()
    if size is not None and len(monitor.baseline) < size and monitor.chart != PROBE_SPRT:
        return "baseline"
    return "live" if monitor.data.get("h") is not None or monitor.chart == PROBE_SPRT else "calibrating"


def _time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def served_time(value: dt.datetime) -> str:
    """A time as the service serves it: ISO 8601 UTC with milliseconds and `Z`."""
    return value.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _compare(monitor: Monitor, doc: Entry, expected: Entry) -> None:
    for name, value in expected.items():
        if not same_value(doc.get(name), value):
            monitor.problems.append(
                f"entry {doc['sequence']}: {name} is {doc.get(name)!r}, recomputed {value!r}"
            )


def same_value(served: JSONValue, ours: JSONValue) -> bool:  # JSON values
    if isinstance(served, dict) and isinstance(ours, dict):
        return served.keys() == ours.keys() and all(same_value(served[k], ours[k]) for k in ours)
    if isinstance(served, bool) or isinstance(ours, bool) or served is None or ours is None:
        return bool(served == ours)
    if isinstance(served, int | float) and isinstance(ours, int | float):
        return abs(served - ours) <= NUMBER_TOLERANCE
    return bool(served == ours)
