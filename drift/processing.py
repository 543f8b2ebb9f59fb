"""The charts processed in the write that brings their points (docs/reference/drift.md,
Processing in the write): after a write's decision and outcome entries are on the chain, one read of the
customer's enabled monitors, each point through each monitor it is eligible for (O(1): the
monitor's carried state), the points appended in bulk, one update per touched monitor, and the
drift entries (baseline completed, conclusion, alarm raised) after all of the write's entries:
by point, then by monitor (oldest first), then in that order for one monitor."""

import datetime as dt
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, models
from django.db.models import F

from audit.measures import same
from config.db import prepared
from config.db.bulk import COPY_FROM, array_param, column_type, copy_from
from drift import trail
from drift.baselines import baseline_complete
from drift.charts import AI_CALIBRATION_CHARTS, PROBE_SPRT, RELIANCE_CHARTS, event
from drift.engine import ChartPoint, Point, advance
from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from drift.outputs import alarm_snapshot
from drift.wire import run_json, spec_of, state_dump, state_load
from keys.models import Customer


def eligible_event(monitor: DriftMonitor, entry: Any, *, first_outcome: bool) -> int | None:  # Any: an entry
    """The entry's event e for the monitor's chart, or None when it is not the monitor's point."""
    if monitor.scope == "user" and entry.user_id != monitor.user_id:
        return None
    if monitor.model_id is not None and entry.model_id != monitor.model_id:
        return None
    if monitor.model_version is not None and entry.model_version != monitor.model_version:
        return None
    probe = entry.probe
    if monitor.chart == PROBE_SPRT:
        if entry.type == "decision" and isinstance(probe, dict) and probe.get("kind") == "known_wrong":
            return event(PROBE_SPRT, followed=bool(entry.followed_ai))
        return None
    if probe is not None or entry.ai_confidence is None:
        return None
    if monitor.chart in RELIANCE_CHARTS:
        return event(monitor.chart, followed=bool(entry.followed_ai)) if entry.type == "decision" else None
    if monitor.chart in AI_CALIBRATION_CHARTS and first_outcome:
        return event(monitor.chart, ai_right=same(entry.outcome, entry.ai_recommendation))
    return None


@dataclass
class _Touched:
    monitor: DriftMonitor
    state: Any  # the engine's ChartState
    spec: Any = None  # the engine's Spec, once the monitor charts
    baseline: list[tuple[float | None, int, int]] = field(default_factory=list)  # (c, e, sequence)


def points_process(*, customer: Customer, entries: Sequence[Any], first_outcomes: set[str]) -> None:
    """Every enabled monitor of the customer through the write's entries (in chain order)."""
    candidates = [
        e for e in entries if e.type == "decision" or (e.type == "outcome" and e.id in first_outcomes)
    ]
    if not candidates:
        return
    monitors = list(
        DriftMonitor.objects.filter(customer=customer, deleted_at__isnull=True, enabled=True)
        .exclude(status=DriftMonitor.Status.CALIBRATING)
        .order_by("configured_sequence")
    )
    if not monitors:
        return
    run = _Run(customer, now=candidates[0].logged_at)  # the write's time, shared by its entries
    for entry in candidates:
        first = entry.type == "outcome" or entry.outcome is not None
        for monitor in monitors:
            e = eligible_event(monitor, entry, first_outcome=first)
            if e is not None:
                run.point(monitor, entry, e)
    run.finish()


# What a write changes on a monitor it touched.
_CARRIED = [
    "state", "baseline", "status", "last_sequence", "open_alarm_id", "alarms_raised",
    "conclusions_h0", "conclusions_h1", "updated_at",
]  # fmt: skip


# A point's row, as _Run builds it (the table's columns but its key).
_POINT_COLUMNS = (
    "monitor_id", "baseline", "index", "sequence", "decision_id", "user_id", "timestamp", "ai_confidence",
    "event", "p", "w", "x", "llr", "llr_sum", "restart", "signal", "conclusion", "alarm_id",
)  # fmt: skip


def _casts(model: type[Any], columns: Sequence[str]) -> list[str]:  # Any: a model class
    """Each column's PostgreSQL type as a cast (without a length)."""
    by_column = {f.column: f for f in model._meta.concrete_fields}
    return [f"::{column_type(by_column[c])}" for c in columns]


def _arrays(
    model: type[Any], columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> list[Any]:  # Any: a model class; columns' values
    """One array parameter per column of `rows` (config.db.bulk.array_param), floats as floats."""
    by_column = {f.column: f for f in model._meta.concrete_fields}
    out = []
    for column, values in zip(columns, zip(*rows, strict=True), strict=True):
        if isinstance(by_column[column], models.FloatField):
            values = tuple(None if v is None else float(v) for v in values)
        out.append(array_param(list(values)))
    return out


@functools.cache
def _points_insert_sql() -> str:
    """PostgreSQL: one array per column, unnested: a fixed text, prepared once per connection
    (config.db.prepared). A multi-row VALUES of bound literals grows with the rows, and psycopg
    split its 900 placeholders (50 monitors) in Python on every write."""
    qn = connection.ops.quote_name
    names = ", ".join(qn(c) for c in _POINT_COLUMNS)
    arrays = ", ".join(f"%s{cast}[]" for cast in _casts(DriftPoint, _POINT_COLUMNS))
    return f"INSERT INTO {qn(DriftPoint._meta.db_table)} ({names}) SELECT * FROM unnest({arrays})"  # noqa: S608 - the model's names


def _points_insert(rows: list[tuple[Any, ...]]) -> None:  # Any: a point's values
    """The write's points as rows, without model instances: on PostgreSQL a COPY from COPY_FROM
    rows (a batch's points), else one prepared INSERT of one array per column; on SQLite one
    executemany."""
    if not rows:
        return
    qn = connection.ops.quote_name
    table, names = qn(DriftPoint._meta.db_table), ", ".join(qn(c) for c in _POINT_COLUMNS)
    if connection.vendor == "postgresql":
        if len(rows) > COPY_FROM:
            with copy_from(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        with prepared.cursor() as cursor:
            cursor.execute(_points_insert_sql(), _arrays(DriftPoint, _POINT_COLUMNS, rows))
        return
    values = "(" + ", ".join("%s" for _ in _POINT_COLUMNS) + ")"
    sql = f"INSERT INTO {table} ({names}) VALUES {values}"  # noqa: S608 - the model's names
    at = _POINT_COLUMNS.index("timestamp")
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.executemany(sql, [(*row[:at], adapt(row[at]), *row[at + 1 :]) for row in rows])


@functools.cache
def _monitor_columns() -> tuple[list[str], list[bool]]:
    """The id and the carried fields' columns, and which hold JSON."""
    by_name = {f.name: f for f in DriftMonitor._meta.concrete_fields}
    fields = [by_name[name] for name in ("id", *_CARRIED)]
    return [str(f.column) for f in fields], [isinstance(f, models.JSONField) for f in fields]


@functools.cache
def _monitors_update_sql(vendor: str, rows: int) -> str:
    """UPDATE ... FROM the rows: on PostgreSQL one array per column, unnested (a fixed text,
    prepared once per connection); on SQLite (3.33+ has UPDATE FROM) a VALUES of `rows` rows."""
    columns, _ = _monitor_columns()
    qn = connection.ops.quote_name
    table = qn(DriftMonitor._meta.db_table)
    names = [f"c{at}" for at in range(len(columns))]
    sets = ", ".join(f"{qn(c)} = v.{n}" for c, n in zip(columns[1:], names[1:], strict=True))
    if vendor == "postgresql":
        arrays = ", ".join(f"%s{cast}[]" for cast in _casts(DriftMonitor, columns))
        source = f"unnest({arrays}) AS v({', '.join(names)})"
    else:
        row = "(" + ", ".join("%s" for _ in columns) + ")"
        listed = ", ".join(f"column{at + 1} AS {n}" for at, n in enumerate(names))
        source = f"(SELECT {listed} FROM (VALUES {', '.join([row] * rows)})) AS v"  # noqa: S608 - the model's names
    return f"UPDATE {table} SET {sets} FROM {source} WHERE {table}.{qn(columns[0])} = v.{names[0]}"  # noqa: S608 - the model's names


def _monitors_update(monitors: list[DriftMonitor]) -> None:
    """The touched monitors' carried fields in one UPDATE ... FROM the rows: Django's bulk_update
    builds a CASE per field and monitor, about 20 ms of CPU per write at 50 monitors. The values
    as the columns take them: JSON as its text, the time as the backend writes it
    (Field.get_db_prep_save per value was most of the statement's CPU)."""
    columns, is_json = _monitor_columns()
    at = columns.index("updated_at")
    time = connection.ops.adapt_datetimefield_value
    rows = []
    for monitor in monitors:
        values = [getattr(monitor, c) for c in columns]
        values = [json.dumps(v) if j and v is not None else v for v, j in zip(values, is_json, strict=True)]
        values[at] = time(values[at])
        rows.append(values)
    if connection.vendor == "postgresql":
        with prepared.cursor() as cursor:
            cursor.execute(_monitors_update_sql("postgresql", 0), _arrays(DriftMonitor, columns, rows))
        return
    with connection.cursor() as cursor:
        cursor.execute(_monitors_update_sql(connection.vendor, len(rows)), [v for row in rows for v in row])


class _Run:
    """One write's drift effects, accumulated in order, written at the end."""

    def __init__(self, customer: Customer, *, now: dt.datetime) -> None:
        self.customer = customer
        self.touched: dict[str, _Touched] = {}
        self.points: list[tuple[Any, ...]] = []  # Any: a point's row, in _POINT_COLUMNS order
        self.records: list[trail.Record] = []
        self.new_alarms: list[DriftAlarm] = []
        self.signalled: dict[str, tuple[int, int, int]] = {}  # open alarm -> (signals, index, sequence)
        self.completed: list[DriftMonitor] = []
        self.now = now

    def _touch(self, monitor: DriftMonitor) -> _Touched:
        touched = self.touched.get(monitor.pk)
        if touched is None:
            touched = self.touched[monitor.pk] = _Touched(monitor, state_load(monitor.state))
        return touched

    def point(self, monitor: DriftMonitor, entry: Any, e: int) -> None:  # Any: an entry
        touched = self._touch(monitor)
        monitor.last_sequence = entry.sequence
        if monitor.status == DriftMonitor.Status.BASELINE:
            self._baseline_point(touched, entry, e)
            return
        if monitor.status != DriftMonitor.Status.LIVE:
            return  # calibrating: not charted
        point = Point(
            entry.sequence, entry.decision_ref, entry.user_id, entry.timestamp, entry.ai_confidence, e
        )
        if touched.spec is None:
            touched.spec = spec_of(monitor)
        charted = advance(touched.spec, touched.state, point)
        alarm_id = self._alarm(monitor, charted) if charted.alarm is not None else None
        if charted.conclusion is not None:
            self._concluded(monitor, charted, alarm_id)
        if charted.alarm is not None and charted.alarm.new_alarm and alarm_id is not None:
            self.records.append(self._raised_record(monitor, charted, alarm_id))
        self.points.append(
            (monitor.pk, False, charted.index, entry.sequence, entry.decision_ref, entry.user_id,
             entry.timestamp, entry.ai_confidence, e, charted.p, charted.w, charted.x, charted.llr,
             charted.llr_sum, charted.restart, charted.signal, charted.conclusion, alarm_id)
        )  # fmt: skip

    def _baseline_point(self, touched: _Touched, entry: Any, e: int) -> None:  # Any: an entry
        monitor = touched.monitor
        self.points.append(
            (monitor.pk, True, None, entry.sequence, entry.decision_ref, entry.user_id, entry.timestamp,
             entry.ai_confidence, e, None, None, None, None, None, False, False, None, None)
        )  # fmt: skip
        touched.baseline.append((entry.ai_confidence, e, entry.sequence))
        baseline = dict(monitor.baseline or {})
        baseline["collected"] = baseline.get("collected", 0) + 1
        if baseline.get("first_sequence") is None:
            baseline["first_sequence"] = entry.sequence
        monitor.baseline = baseline
        if baseline["collected"] >= baseline["decisions"]:
            points = [
                (c, ev, s)
                for c, ev, s in DriftPoint.objects.filter(monitor=monitor, baseline=True)
                .order_by("sequence")
                .values_list("ai_confidence", "event", "sequence")
            ] + touched.baseline
            self.records.append(baseline_complete(monitor, points, at=self.now))
            if monitor.status == DriftMonitor.Status.CALIBRATING:
                self.completed.append(monitor)

    def _alarm(self, monitor: DriftMonitor, charted: ChartPoint) -> str:
        draft = charted.alarm
        assert draft is not None
        if not draft.new_alarm and monitor.open_alarm_id:
            count = self.signalled.get(monitor.open_alarm_id, (0, 0, 0))[0]
            self.signalled[monitor.open_alarm_id] = (count + 1, charted.index, charted.point.sequence)
            return monitor.open_alarm_id
        alarm = DriftAlarm(
            customer=self.customer,
            monitor=monitor,
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

    def _raised_record(self, monitor: DriftMonitor, charted: ChartPoint, alarm_id: str) -> trail.Record:
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

    def _concluded(self, monitor: DriftMonitor, charted: ChartPoint, alarm_id: str | None) -> None:
        assert charted.run is not None and charted.llr_sum is not None
        if charted.conclusion == "h0":
            monitor.conclusions_h0 = (monitor.conclusions_h0 or 0) + 1
        else:
            monitor.conclusions_h1 = (monitor.conclusions_h1 or 0) + 1
        sprt = monitor.sprt or {}
        spec = spec_of(monitor).sprt
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
                done = self.touched[record.ref].monitor
                done.baseline = {**(done.baseline or {}), "entry_sequence": record.sequence}
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
        _points_insert(self.points)
        touched = [t.monitor for t in self.touched.values()]
        for t in self.touched.values():
            t.monitor.state = state_dump(t.state)
            t.monitor.updated_at = self.now
        _monitors_update(touched)
        for monitor in self.completed:  # `calibrating` until a worker appends its calibration
            from drift.calibrating import calibration_send

            calibration_send(monitor.pk)
