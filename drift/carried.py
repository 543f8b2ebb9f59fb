"""The write path's reads and writes of the monitors and their points (drift.processing), as
plain rows: one raw SELECT of the customer's charting monitors into `Carried` values (no model
instance, no JSON decoded that the point does not need), the points appended in one statement,
and the touched monitors saved by one UPDATE ... FROM the rows. On PostgreSQL each statement has
a fixed text, prepared once per connection (config.db.prepared).

Reading 50 monitors as Django model instances (converters, four JSON columns decoded each) was
about half of the drift CPU of a `POST /log` (bench/README.md, Drift)."""

import datetime as dt
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from config.db import prepared
from config.db.bulk import COPY_FROM, column_arrays, column_casts, copy_from
from config.jsondoc import JSONObject
from drift.charts import PROBE_SPRT, Fit, Sprt
from drift.engine import ChartState, Spec
from drift.models import DriftMonitor, DriftPoint
from drift.wire import STATE_COLUMNS, StateRow, state_from_row, state_row


@dataclass(slots=True)
class Carried:
    """A charting monitor as one write reads and changes it. `baseline` and `sprt` hold the
    columns' JSON text as read; `baseline_doc` the decoded baseline, once a point changed it."""

    pk: str
    name: str
    chart: str
    scope: str
    user_id: str | None
    model_id: str | None
    model_version: str | None
    odds_ratio: float | None
    h: float | None
    status: str
    baseline: str | None
    sprt: str | None
    open_alarm_id: str | None
    alarms_raised: int
    conclusions_h0: int | None
    conclusions_h1: int | None
    last_sequence: int | None
    state: ChartState
    baseline_doc: JSONObject | None = None

    def baseline_json(self) -> JSONObject | None:
        """The baseline's members (decoded once; the caller may change the dict it gets)."""
        if self.baseline_doc is None and self.baseline is not None:
            self.baseline_doc = json.loads(self.baseline)
        return self.baseline_doc

    def sprt_json(self) -> JSONObject | None:
        return None if self.sprt is None else dict(json.loads(self.sprt))

    def spec(self) -> Spec:
        if self.baseline_doc is not None:  # changed by this write: the fit as it now stands
            return _spec(self.chart, self.odds_ratio, self.h, json.dumps(self.baseline_doc), self.sprt)
        return _spec(self.chart, self.odds_ratio, self.h, self.baseline, self.sprt)


@functools.lru_cache(maxsize=4096)
def _spec(
    chart: str, odds_ratio: float | None, h: float | None, baseline: str | None, sprt: str | None
) -> Spec:
    """A monitor's Spec from its columns (as drift.wire.spec_of from the model): a pure function
    of texts that stay the same from one write to the next, so each is decoded once."""
    if chart == PROBE_SPRT:
        doc = json.loads(sprt) if sprt is not None else None
        return Spec(
            chart=PROBE_SPRT,
            sprt=None if doc is None else Sprt(doc["p0"], doc["p1"], doc["alpha"], doc["beta"]),
        )
    fit = (json.loads(baseline) or {}).get("fit") if baseline is not None else None
    return Spec(
        chart=chart,
        odds_ratio=odds_ratio or 2.0,
        h=h,
        fit=Fit(fit["method"], fit["intercept"], fit["slope"], fit["followed"]) if fit else None,
    )


_READ = (
    "id", "name", "chart", "scope", "user_id", "model_id", "model_version", "odds_ratio", "h", "status",
    "baseline", "sprt", "open_alarm_id", "alarms_raised", "conclusions_h0", "conclusions_h1", "last_sequence",
    *STATE_COLUMNS,
)  # fmt: skip
_STATE_AT = _READ.index(STATE_COLUMNS[0])


@functools.cache
def _read_sql(vendor: str) -> str:
    qn = connection.ops.quote_name
    names = ", ".join(qn(c) for c in _READ)
    calibrating = DriftMonitor.Status.CALIBRATING.value
    return (
        f"SELECT {names} FROM {qn(DriftMonitor._meta.db_table)} WHERE customer_id = %s AND deleted_at IS NULL"  # noqa: S608 - the model's names
        f" AND enabled AND status <> '{calibrating}' ORDER BY configured_sequence"
    )


def monitors_read(customer_id: str) -> list[Carried]:
    """The customer's enabled monitors that chart or collect a baseline, oldest first."""
    if connection.vendor == "postgresql":
        with prepared.cursor() as cursor:
            cursor.execute(_read_sql("postgresql"), [customer_id])
            rows = cursor.fetchall()
    else:
        with connection.cursor() as cursor:
            cursor.execute(_read_sql(connection.vendor), [customer_id])
            rows = cursor.fetchall()
    if connection.vendor != "postgresql":  # SQLite: Django's converters give UTC times without a zone
        rows = [(*row[:_STATE_AT], *_sqlite_state(row[_STATE_AT:])) for row in rows]
    out = []
    for row in rows:
        pk, name, chart, scope, user_id, model_id, model_version, odds_ratio, h, status, *rest = row[
            :_STATE_AT
        ]
        baseline, sprt, open_alarm_id, alarms_raised, h0, h1, last_sequence = rest
        out.append(
            Carried(pk, name, chart, scope, user_id, model_id, model_version, odds_ratio, h, status, baseline, sprt,
                    open_alarm_id, alarms_raised, h0, h1, last_sequence, state_from_row(row[_STATE_AT:]))
        )  # fmt: skip
    return out


def _sqlite_state(row: Sequence[Any]) -> StateRow:  # Any: SQLite's values
    def time(value: dt.datetime | None) -> dt.datetime | None:
        return None if value is None else value.replace(tzinfo=dt.UTC)

    points, statistic, restart, open_alarm, start, run_points, first, last, t0, t1, excess, misses = row
    return (points, statistic, restart, open_alarm, start, run_points, first, last, time(t0), time(t1), excess,
            misses)  # fmt: skip


# A point's row, as drift.processing builds it (the table's columns but its key).
POINT_COLUMNS = (
    "monitor_id", "baseline", "index", "sequence", "decision_id", "user_id", "timestamp", "ai_confidence",
    "event", "p", "w", "x", "llr", "llr_sum", "restart", "signal", "conclusion", "alarm_id",
)  # fmt: skip


@functools.cache
def _points_insert_sql() -> str:
    """PostgreSQL: one array per column, unnested: a fixed text, prepared once per connection
    (config.db.prepared). A multi-row VALUES of bound literals grows with the rows, and psycopg
    split its 900 placeholders (50 monitors) in Python on every write."""
    qn = connection.ops.quote_name
    names = ", ".join(qn(c) for c in POINT_COLUMNS)
    arrays = ", ".join(f"%s{cast}[]" for cast in column_casts(DriftPoint, POINT_COLUMNS))
    return f"INSERT INTO {qn(DriftPoint._meta.db_table)} ({names}) SELECT * FROM unnest({arrays})"  # noqa: S608 - the model's names


def points_insert(rows: list[tuple[Any, ...]]) -> None:  # Any: a point's values
    """The write's points as rows, without model instances: on PostgreSQL a COPY from COPY_FROM
    rows (a batch's points), else one prepared INSERT of one array per column; on SQLite one
    executemany."""
    if not rows:
        return
    qn = connection.ops.quote_name
    table, names = qn(DriftPoint._meta.db_table), ", ".join(qn(c) for c in POINT_COLUMNS)
    if connection.vendor == "postgresql":
        if len(rows) > COPY_FROM:
            with copy_from(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        with prepared.cursor() as cursor:
            cursor.execute(_points_insert_sql(), column_arrays(DriftPoint, POINT_COLUMNS, rows))
        return
    values = "(" + ", ".join("%s" for _ in POINT_COLUMNS) + ")"
    sql = f"INSERT INTO {table} ({names}) VALUES {values}"  # noqa: S608 - the model's names
    at = POINT_COLUMNS.index("timestamp")
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.executemany(sql, [(*row[:at], adapt(row[at]), *row[at + 1 :]) for row in rows])


# What a write changes on a monitor it touched: the key, then the carried columns. `baseline`
# is null where the write left it as it was (a stored baseline is never null once it changed).
_WRITTEN = (
    "id", "baseline", "status", "last_sequence", "open_alarm_id", "alarms_raised", "conclusions_h0",
    "conclusions_h1", "updated_at", *STATE_COLUMNS,
)  # fmt: skip


@functools.cache
def _update_sql(vendor: str, rows: int) -> str:
    """UPDATE ... FROM the rows: on PostgreSQL one array per column, unnested (a fixed text,
    prepared once per connection); on SQLite (3.33+ has UPDATE FROM) a VALUES of `rows` rows."""
    qn = connection.ops.quote_name
    table = qn(DriftMonitor._meta.db_table)
    names = [f"c{at}" for at in range(len(_WRITTEN))]
    sets = ", ".join(
        f"{qn(c)} = COALESCE(v.{n}, {table}.{qn(c)})" if c == "baseline" else f"{qn(c)} = v.{n}"
        for c, n in zip(_WRITTEN[1:], names[1:], strict=True)
    )
    if vendor == "postgresql":
        arrays = ", ".join(f"%s{cast}[]" for cast in column_casts(DriftMonitor, _WRITTEN))
        source = f"unnest({arrays}) AS v({', '.join(names)})"
    else:
        row = "(" + ", ".join("%s" for _ in _WRITTEN) + ")"
        listed = ", ".join(f"column{at + 1} AS {n}" for at, n in enumerate(names))
        source = f"(SELECT {listed} FROM (VALUES {', '.join([row] * rows)})) AS v"  # noqa: S608 - the model's names
    return f"UPDATE {table} SET {sets} FROM {source} WHERE {table}.id = v.{names[0]}"  # noqa: S608 - the model's names


def monitors_update(monitors: Sequence[Carried], *, now: dt.datetime) -> None:
    """The touched monitors' carried columns in one statement (Django's bulk_update builds a
    CASE per field and monitor). The values as the columns take them: JSON as its text, the
    time as the backend writes it."""
    time = connection.ops.adapt_datetimefield_value
    at = time(now)
    rows = []
    for m in monitors:
        state = state_row(m.state)
        if connection.vendor != "postgresql":
            state = (*state[:8], time(state[8]), time(state[9]), *state[10:])  # type: ignore[assignment]
        baseline = None if m.baseline_doc is None else json.dumps(m.baseline_doc)
        rows.append((m.pk, baseline, m.status, m.last_sequence, m.open_alarm_id, m.alarms_raised,
                     m.conclusions_h0, m.conclusions_h1, at, *state))  # fmt: skip
    if connection.vendor == "postgresql":
        with prepared.cursor() as cursor:
            cursor.execute(_update_sql("postgresql", 0), column_arrays(DriftMonitor, _WRITTEN, rows))
        return
    with connection.cursor() as cursor:
        cursor.execute(_update_sql(connection.vendor, len(rows)), [v for row in rows for v in row])
