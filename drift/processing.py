"""The charts processed in the write that brings their points (docs/reference/drift.md,
Processing in the write): after a write's decision and outcome entries are on the chain, one read of the
customer's enabled monitors, each point through each monitor it is eligible for (O(1): the
monitor's carried state), the points appended in bulk, one update per touched monitor, and the
drift entries (baseline completed, conclusion, alarm raised) after all of the write's entries:
by point, then by monitor (oldest first), then in that order for one monitor."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F

from audit.measures import same
from drift import trail
from drift.baselines import baseline_complete
from drift.carried import Carried, monitors_read, monitors_update, points_insert
from drift.charts import AI_CALIBRATION_CHARTS, PROBE_SPRT, RELIANCE_CHARTS, event
from drift.engine import ChartPoint, Point, Spec, advance
from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from drift.outputs import alarm_snapshot
from drift.wire import MonitorFields, run_json
from keys.models import Customer


def eligible_event(monitor: MonitorFields, entry: Any, *, first_outcome: bool) -> int | None:  # Any: an entry
    """The entry's event e for the monitor's chart, or None when it is not the monitor's point."""
    return chart_event(monitor.chart, entry, first_outcome=first_outcome) if matches(monitor, entry) else None


def matches(monitor: MonitorFields, entry: Any) -> bool:  # Any: an entry
    """Whether the entry is in the monitor's scope, model and version."""
    if monitor.scope == "user" and entry.user_id != monitor.user_id:
        return False
    if monitor.model_id is not None and entry.model_id != monitor.model_id:
        return False
    return monitor.model_version is None or entry.model_version == monitor.model_version


def chart_event(chart: str, entry: Any, *, first_outcome: bool) -> int | None:  # Any: an entry
    """The entry's event e for a chart, or None when it is no point of that chart."""
    probe = entry.probe
    if chart == PROBE_SPRT:
        if entry.type == "decision" and isinstance(probe, dict) and probe.get("kind") == "known_wrong":
            return event(PROBE_SPRT, followed=bool(entry.followed_ai))
        return None
    if probe is not None or entry.ai_confidence is None:
        return None
    if chart in RELIANCE_CHARTS:
        return event(chart, followed=bool(entry.followed_ai)) if entry.type == "decision" else None
    if chart in AI_CALIBRATION_CHARTS and first_outcome:
        return event(chart, ai_right=same(entry.outcome, entry.ai_recommendation))
    return None


@dataclass
class _Touched:
    monitor: Carried
    spec: Spec | None = None  # once the monitor charts
    baseline: list[tuple[float | None, int, int]] = field(default_factory=list)  # (c, e, sequence)


def points_process(*, customer: Customer, entries: Sequence[Any], first_outcomes: set[str]) -> None:
    """Every enabled monitor of the customer through the write's entries (in chain order)."""
    candidates = [
        e for e in entries if e.type == "decision" or (e.type == "outcome" and e.id in first_outcomes)
    ]
    if not candidates:
        return
    monitors = monitors_read(customer.pk)
    if not monitors:
        return
    run = _Run(customer, now=candidates[0].logged_at)  # the write's time, shared by its entries
    for entry in candidates:
        first = entry.type == "outcome" or entry.outcome is not None
        # an entry's event depends on the chart alone, its point on the event: each made once
        events: dict[str, int | None] = {}
        points: dict[int, Point] = {}
        for monitor in monitors:
            if not matches(monitor, entry):
                continue
            chart = monitor.chart
            if chart not in events:
                events[chart] = chart_event(chart, entry, first_outcome=first)
            e = events[chart]
            if e is None:
                continue
            point = points.get(e)
            if point is None:
                point = points[e] = Point(
                    entry.sequence, entry.decision_ref, entry.user_id, entry.timestamp, entry.ai_confidence, e
                )
            run.point(monitor, point)
    run.finish()


class _Run:
    """One write's drift effects, accumulated in order, written at the end."""

    def __init__(self, customer: Customer, *, now: dt.datetime) -> None:
        self.customer = customer
        self.touched: dict[str, _Touched] = {}
        self.points: list[tuple[Any, ...]] = []  # Any: a point's row, in _POINT_COLUMNS order
        self.records: list[trail.Record] = []
        self.new_alarms: list[DriftAlarm] = []
        self.signalled: dict[str, tuple[int, int, int]] = {}  # open alarm -> (signals, index, sequence)
        self.completed: list[Carried] = []
        self.now = now

    def point(self, monitor: Carried, point: Point) -> None:
        touched = self.touched.get(monitor.pk)
        if touched is None:
            touched = self.touched[monitor.pk] = _Touched(monitor)
        monitor.last_sequence = point.sequence
        if monitor.status == DriftMonitor.Status.BASELINE:
            self._baseline_point(touched, point)
            return
        if monitor.status != DriftMonitor.Status.LIVE:
            return  # calibrating: not charted
        if touched.spec is None:
            touched.spec = monitor.spec()
        charted = advance(touched.spec, monitor.state, point)
        alarm_id = self._alarm(monitor, charted) if charted.alarm is not None else None
        if charted.conclusion is not None:
            self._concluded(monitor, charted, alarm_id)
        if charted.alarm is not None and charted.alarm.new_alarm and alarm_id is not None:
            self.records.append(self._raised_record(monitor, charted, alarm_id))
        self.points.append(
            (monitor.pk, False, charted.index, point.sequence, point.decision_id, point.user_id,
             point.timestamp, point.ai_confidence, point.event, charted.p, charted.w, charted.x, charted.llr,
             charted.llr_sum, charted.restart, charted.signal, charted.conclusion, alarm_id)
        )  # fmt: skip

    def _baseline_point(self, touched: _Touched, point: Point) -> None:
        monitor = touched.monitor
        self.points.append(
            (monitor.pk, True, None, point.sequence, point.decision_id, point.user_id, point.timestamp,
             point.ai_confidence, point.event, None, None, None, None, None, False, False, None, None)
        )  # fmt: skip
        touched.baseline.append((point.ai_confidence, point.event, point.sequence))
        baseline = monitor.baseline_json()
        assert baseline is not None  # a monitor collecting a baseline has one
        baseline["collected"] = baseline.get("collected", 0) + 1
        if baseline.get("first_sequence") is None:
            baseline["first_sequence"] = point.sequence
        if baseline["collected"] >= baseline["decisions"]:
            points = [
                (c, ev, s)
                for c, ev, s in DriftPoint.objects.filter(monitor_id=monitor.pk, baseline=True)
                .order_by("sequence")
                .values_list("ai_confidence", "event", "sequence")
            ] + touched.baseline
            record, monitor.status = baseline_complete(monitor, baseline, points, at=self.now)
            self.records.append(record)
            if monitor.status == DriftMonitor.Status.CALIBRATING:
                self.completed.append(monitor)

    def _alarm(self, monitor: Carried, charted: ChartPoint) -> str:
        draft = charted.alarm
        assert draft is not None
        if not draft.new_alarm and monitor.open_alarm_id:
            count = self.signalled.get(monitor.open_alarm_id, (0, 0, 0))[0]
            self.signalled[monitor.open_alarm_id] = (count + 1, charted.index, charted.point.sequence)
            return monitor.open_alarm_id
        alarm = DriftAlarm(
            customer=self.customer,
            monitor_id=monitor.pk,
            monitor_snapshot=alarm_snapshot(monitor),
            chart=monitor.chart,
            user_id=monitor.user_id,
            model_id=monitor.model_id,
            point_index=charted.index,
            decision_id=charted.point.decision_id,
            decision_sequence=charted.point.sequence,
            statistic=draft.statistic,
            threshold=draft.threshold,
            run=run_json(draft.run),
            excess=draft.excess,
            severity=draft.severity,
            signals=1,
            last_signal_index=charted.index,
            last_signal_sequence=charted.point.sequence,
            raised_at=self.now,
            entry_sequence=0,
        )
        self.new_alarms.append(alarm)
        monitor.open_alarm_id = alarm.pk
        monitor.alarms_raised += 1
        return alarm.pk

    def _raised_record(self, monitor: Carried, charted: ChartPoint, alarm_id: str) -> trail.Record:
        alarm = next(a for a in self.new_alarms if a.pk == alarm_id)
        data = {
            "alarm_id": alarm_id,
            "monitor_id": monitor.pk,
            "chart": monitor.chart,
            "user_id": monitor.user_id,
            "model_id": monitor.model_id,
            "point_index": charted.index,
            "decision_id": alarm.decision_id,
            "decision_sequence": alarm.decision_sequence,
            "statistic": round(alarm.statistic, 6),
            "threshold": alarm.threshold if monitor.chart != PROBE_SPRT else round(alarm.threshold, 6),
            "run": alarm.run,
            "excess": round(alarm.excess, 4),
            "severity": alarm.severity,
            "scope": monitor.scope,
            "model_version": monitor.model_version,
            "odds_ratio": monitor.odds_ratio,
        }
        return trail.Record(trail.RAISED, alarm_id, data, user_id=monitor.user_id)

    def _concluded(self, monitor: Carried, charted: ChartPoint, alarm_id: str | None) -> None:
        assert charted.run is not None and charted.llr_sum is not None
        if charted.conclusion == "h0":
            monitor.conclusions_h0 = (monitor.conclusions_h0 or 0) + 1
        else:
            monitor.conclusions_h1 = (monitor.conclusions_h1 or 0) + 1
        sprt = monitor.sprt_json() or {}
        spec = monitor.spec().sprt
        assert spec is not None
        data = {
            "monitor_id": monitor.pk,
            "user_id": monitor.user_id,
            "model_id": monitor.model_id,
            "conclusion": charted.conclusion,
            "probes": charted.run.points,
            "misses": charted.run.misses,
            "llr_sum": round(charted.llr_sum, 6),
            "upper_bound": round(spec.upper_bound, 6),
            "lower_bound": round(spec.lower_bound, 6),
            **{name: sprt[name] for name in ("p0", "p1", "alpha", "beta")},
            "point_index": charted.index,
            "decision_id": charted.point.decision_id,
            "decision_sequence": charted.point.sequence,
            "alarm_id": alarm_id,
        }
        self.records.append(trail.Record(trail.CONCLUDED, monitor.pk, data, user_id=monitor.user_id))

    def finish(self) -> None:
        if not self.touched:
            return
        trail.records_append(self.customer, self.records, at=self.now)
        raised = {r.ref: r.sequence for r in self.records if r.type == trail.RAISED}
        for record in self.records:
            if record.type == trail.BASELINE_COMPLETED:
                baseline = self.touched[record.ref].monitor.baseline_json()
                assert baseline is not None
                baseline["entry_sequence"] = record.sequence
        for alarm in self.new_alarms:
            alarm.entry_sequence = raised[alarm.pk] or 0
        for alarm_id, (count, index, sequence) in self.signalled.items():
            if alarm_id in raised:  # raised by this write: its row is written with its signals
                alarm = next(a for a in self.new_alarms if a.pk == alarm_id)
                alarm.signals += count
                alarm.last_signal_index, alarm.last_signal_sequence = index, sequence
            else:
                DriftAlarm.objects.filter(pk=alarm_id).update(
                    signals=F("signals") + count, last_signal_index=index, last_signal_sequence=sequence
                )
        DriftAlarm.objects.bulk_create(self.new_alarms)
        points_insert(self.points)
        monitors_update([t.monitor for t in self.touched.values()], now=self.now)
        for monitor in self.completed:  # `calibrating` until a worker appends its calibration
            from drift.calibrating import calibration_send

            calibration_send(monitor.pk)
