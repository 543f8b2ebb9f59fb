"""The stored forms of the engine's values (drift.engine): a monitor's ChartState as JSON, its
Spec from its row, and times as served (docs/reference/conventions.md, Timestamps)."""

import datetime as dt

from config.jsondoc import JSONObject
from config.timeutils import isoformat
from drift.charts import PROBE_SPRT, Fit, Sprt
from drift.engine import ChartState, Run, Spec
from drift.models import DriftMonitor

SPRT_DEFAULTS = {"p0": 0.10, "p1": 0.30, "alpha": 0.05, "beta": 0.10}


def _time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


# a run's JSON members
def run_json(run: Run) -> JSONObject:
    """The run as an alarm serves it."""
    out = run.as_dict()
    out["decision_time_from"] = isoformat(run.decision_time_from)
    out["decision_time_to"] = isoformat(run.decision_time_to)
    return out


# the state's JSON members
def state_dump(state: ChartState) -> JSONObject:
    run = None
    if state.run is not None:
        run = run_json(state.run) | {"excess": state.run.excess, "misses": state.run.misses}
    return {
        "points": state.points,
        "statistic": state.statistic,
        "restart": state.restart,
        "open_alarm": state.open_alarm,
        "run": run,
    }


# the state's JSON members
def state_load(data: JSONObject) -> ChartState:
    if not data:
        return ChartState()
    run = data.get("run")
    return ChartState(
        points=data["points"],
        statistic=data["statistic"],
        restart=data["restart"],
        open_alarm=data["open_alarm"],
        run=None
        if run is None
        else Run(
            run["start_index"],
            run["points"],
            run["first_sequence"],
            run["last_sequence"],
            _time(run["decision_time_from"]),
            _time(run["decision_time_to"]),
            run["excess"],
            run["misses"],
        ),
    )


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
