"""The stored forms of the engine's values (drift.engine): a monitor's ChartState in its columns, its
Spec from its row, and times as served (docs/reference/conventions.md, Timestamps)."""

import datetime as dt
from typing import Protocol

from config.jsondoc import JSONObject
from config.timeutils import isoformat
from drift.charts import PROBE_SPRT, Fit, Sprt
from drift.engine import ChartState, Run, Spec
from drift.models import DriftMonitor


class MonitorFields(Protocol):
    """What the write path reads of a monitor, a model instance or its row (drift.carried)."""

    @property
    def pk(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def chart(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def user_id(self) -> str | None: ...
    @property
    def model_id(self) -> str | None: ...
    @property
    def model_version(self) -> str | None: ...
    @property
    def odds_ratio(self) -> float | None: ...
    @property
    def h(self) -> float | None: ...


SPRT_DEFAULTS = {"p0": 0.10, "p1": 0.30, "alpha": 0.05, "beta": 0.10}


# a run's JSON members
def run_json(run: Run) -> JSONObject:
    """The run as an alarm serves it."""
    out = run.as_dict()
    out["decision_time_from"] = isoformat(run.decision_time_from)
    out["decision_time_to"] = isoformat(run.decision_time_to)
    return out


# the state's typed columns, in this order (drift.models.DriftMonitor)
STATE_COLUMNS = (
    "chart_points", "chart_statistic", "chart_restart", "chart_open_alarm", "run_start_index", "run_points",
    "run_first_sequence", "run_last_sequence", "run_time_from", "run_time_to", "run_excess", "run_misses",
)  # fmt: skip

# a state's column values, as STATE_COLUMNS (ints, floats, bools, datetimes, None)
StateRow = tuple[
    int, float, bool, bool, int | None, int | None, int | None, int | None,
    dt.datetime | None, dt.datetime | None, float | None, int | None,
]  # fmt: skip


def state_from_row(row: StateRow) -> ChartState:
    points, statistic, restart, open_alarm, start, run_points, first, last, t0, t1, excess, misses = row
    run = None
    if start is not None:
        assert run_points is not None and first is not None and last is not None and t0 is not None
        assert t1 is not None and excess is not None and misses is not None
        run = Run(start, run_points, first, last, t0, t1, excess, misses)
    return ChartState(points=points, statistic=statistic, restart=restart, open_alarm=open_alarm, run=run)


def state_row(state: ChartState) -> StateRow:
    run = state.run
    if run is None:
        return (state.points, state.statistic, state.restart, state.open_alarm, None, None, None, None, None, None,
                None, None)  # fmt: skip
    return (state.points, state.statistic, state.restart, state.open_alarm, run.start_index, run.points,
            run.first_sequence, run.last_sequence, run.decision_time_from, run.decision_time_to, run.excess,
            run.misses)  # fmt: skip


def state_of(monitor: DriftMonitor) -> ChartState:
    """The monitor's carried ChartState."""
    return state_from_row(
        (monitor.chart_points, monitor.chart_statistic, monitor.chart_restart, monitor.chart_open_alarm,
         monitor.run_start_index, monitor.run_points, monitor.run_first_sequence, monitor.run_last_sequence,
         monitor.run_time_from, monitor.run_time_to, monitor.run_excess, monitor.run_misses)
    )  # fmt: skip


def state_set(monitor: DriftMonitor, state: ChartState) -> None:
    """Store `state` in the monitor's columns (the caller saves it)."""
    for column, value in zip(STATE_COLUMNS, state_row(state), strict=True):
        setattr(monitor, column, value)


def fit_of(monitor: DriftMonitor) -> Fit | None:
    fit = (monitor.baseline or {}).get("fit")
    if not fit:
        return None
    return Fit(fit["method"], fit["intercept"], fit["slope"], fit["followed"])


def sprt_of(monitor: DriftMonitor) -> Sprt | None:
    if monitor.sprt is None:
        return None
    return Sprt(monitor.sprt["p0"], monitor.sprt["p1"], monitor.sprt["alpha"], monitor.sprt["beta"])


def spec_of(monitor: DriftMonitor) -> Spec:
    if monitor.chart == PROBE_SPRT:
        return Spec(chart=PROBE_SPRT, sprt=sprt_of(monitor))
    return Spec(chart=monitor.chart, odds_ratio=monitor.odds_ratio or 2.0, h=monitor.h, fit=fit_of(monitor))


# the sprt object's JSON members
def sprt_json(monitor: DriftMonitor) -> JSONObject | None:
    sprt = sprt_of(monitor)
    if sprt is None:
        return None
    return dict(monitor.sprt or {}) | {
        "upper_bound": round(sprt.upper_bound, 6),
        "lower_bound": round(sprt.lower_bound, 6),
        "miss_llr": round(sprt.miss_llr, 6),
        "catch_llr": round(sprt.catch_llr, 6),
        "asn_h0": round(sprt.asn_h0, 1),
        "asn_h1": round(sprt.asn_h1, 1),
    }
