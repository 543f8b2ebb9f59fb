"""One monitor's chart, point by point (docs/reference/drift.md, The charts): the restart rules,
the alarm's run, its excess and severity, and the repeat signals of an open alarm. Standard
library only and free of the database, like `drift.charts`, so the service's write path and the
offline verifier (`audit/offline_verify.py --drift`) drive a chart with the same code.

A monitor carries a `ChartState` between points; `advance` takes the next eligible point,
returns it as charted (`ChartPoint`, with an `AlarmDraft` when it signals or concludes `h1`)
and updates the state. `restart` and `acknowledged` apply the restarts that come from outside the
points: an acknowledgement, a change of h, re-enabling, an applied calibration. O(1) per point.
"""

import datetime as dt
from dataclasses import dataclass, field, replace

from config.jsondoc import JSONObject
from drift.charts import (
    CUSUM_CHARTS,
    PROBE_SPRT,
    Fit,
    Sprt,
    cusum_step,
    excess_term,
    in_control_probability,
    severity,
    sprt_step,
)


@dataclass(frozen=True)
class Spec:
    """What a chart needs of its monitor: the chart, and R_A and h (None while it has none) for
    a CUSUM chart, the baseline fit for a reliance chart, the test's parameters for `probe_sprt`."""

    chart: str
    odds_ratio: float = 2.0
    h: float | None = None
    fit: Fit | None = None
    sprt: Sprt | None = None


# The per-point values (Point, Run, AlarmDraft, ChartPoint, and charts.CusumPoint, SprtPoint) are
# slotted dataclasses that nothing changes once made, not frozen ones: a frozen dataclass sets
# each field through object.__setattr__, and those objects were most of a point's CPU in a write
# (bench/README.md, Drift). Spec, Fit and Sprt, made once per monitor, stay frozen.
@dataclass(slots=True)
class Point:
    """An eligible point: the entry that brought it, the decision, and its event e (1 = the
    chart's watched event; for `probe_sprt`, 1 = the probe was missed)."""

    sequence: int
    decision_id: str
    user_id: str | None
    timestamp: dt.datetime
    ai_confidence: float | None
    event: int


@dataclass(slots=True)
class Run:
    """The points since the chart last carried 0 (for `probe_sprt`, since its last restart)."""

    start_index: int
    points: int
    first_sequence: int
    last_sequence: int
    decision_time_from: dt.datetime
    decision_time_to: dt.datetime
    excess: float  # CUSUM: the sum of the points' excess terms
    misses: int  # probe_sprt: the missed probes (the run's `points` are its probes)

    def extended(self, point: Point, excess: float) -> "Run":
        # the constructor, not dataclasses.replace: this runs per point and monitor of a write
        return Run(
            self.start_index,
            self.points + 1,
            self.first_sequence,
            point.sequence,
            min(self.decision_time_from, point.timestamp),
            max(self.decision_time_to, point.timestamp),
            self.excess + excess,
            self.misses + point.event,
        )

    @staticmethod
    def starting(index: int, point: Point, excess: float) -> "Run":
        return Run(
            index, 1, point.sequence, point.sequence, point.timestamp, point.timestamp, excess, point.event
        )

    def as_dict(self) -> JSONObject:  # the run's JSON members (ints, floats, datetimes)
        return {
            "start_index": self.start_index,
            "points": self.points,
            "first_sequence": self.first_sequence,
            "last_sequence": self.last_sequence,
            "decision_time_from": self.decision_time_from,
            "decision_time_to": self.decision_time_to,
        }


@dataclass(slots=True)
class ChartState:
    """What a monitor carries from one point to the next."""

    points: int = 0  # chart points so far: the index of the last
    statistic: float = 0.0  # X (CUSUM) or S (SPRT) carried into the next point
    restart: bool = True  # the next point's carried 0 comes from a restart (or it is the first)
    open_alarm: bool = False
    run: Run | None = field(default=None)

    def to_json(self) -> JSONObject:  # JSON members
        """The state as JSON values (for a JSON column): the run's times as ISO 8601 text, its
        excess as the double itself (JSON keeps every digit of a float)."""
        run = None
        if self.run is not None:
            run = {**self.run.as_dict(), "excess": self.run.excess, "misses": self.run.misses}
            for key in ("decision_time_from", "decision_time_to"):
                run[key] = run[key].isoformat()
        return {
            "points": self.points,
            "statistic": self.statistic,
            "restart": self.restart,
            "open_alarm": self.open_alarm,
            "run": run,
        }

    @staticmethod
    def from_json(data: JSONObject) -> "ChartState":  # JSON members
        run = data.get("run")
        return ChartState(
            points=int(data["points"]),
            statistic=float(data["statistic"]),
            restart=bool(data["restart"]),
            open_alarm=bool(data["open_alarm"]),
            run=None
            if run is None
            else Run(
                start_index=run["start_index"],
                points=run["points"],
                first_sequence=run["first_sequence"],
                last_sequence=run["last_sequence"],
                decision_time_from=dt.datetime.fromisoformat(run["decision_time_from"]),
                decision_time_to=dt.datetime.fromisoformat(run["decision_time_to"]),
                excess=float(run["excess"]),
                misses=int(run["misses"]),
            ),
        )


@dataclass(slots=True)
class AlarmDraft:
    """A CUSUM signal or an SPRT `h1` conclusion: a new alarm when the monitor had none open, else
    one more signal of the open alarm."""

    new_alarm: bool
    statistic: float
    threshold: float
    run: Run
    excess: float
    severity: str


@dataclass(slots=True)
class ChartPoint:
    """A point as charted, unrounded (`wire` rounds it as served)."""

    index: int
    point: Point
    restart: bool
    p: float | None = None  # CUSUM
    w: float | None = None
    x: float | None = None
    signal: bool = False
    llr: float | None = None  # probe_sprt
    llr_sum: float | None = None
    conclusion: str | None = None
    alarm: AlarmDraft | None = None
    run: Run | None = None  # the run through this point (a conclusion's probes and misses)

    def wire(self) -> JSONObject:
        """The series fields, numbers rounded to 6 places; `timestamp` stays a datetime and
        `alarm_id` is the caller's."""
        common = {
            "index": self.index,
            "sequence": self.point.sequence,
            "decision_id": self.point.decision_id,
            "user_id": self.point.user_id,
            "timestamp": self.point.timestamp,
            "event": self.point.event,
        }
        if self.llr is not None and self.llr_sum is not None:
            return common | {
                "llr": round(self.llr, 6),
                "llr_sum": round(self.llr_sum, 6),
                "restart": self.restart,
                "conclusion": self.conclusion,
            }
        assert self.p is not None and self.w is not None and self.x is not None
        return common | {
            "ai_confidence": self.point.ai_confidence,
            "p": round(self.p, 6),
            "w": round(self.w, 6),
            "x": round(self.x, 6),
            "restart": self.restart,
            "signal": self.signal,
        }


def advance(spec: Spec, state: ChartState, point: Point) -> ChartPoint:
    """Chart the next eligible point and update `state`. A CUSUM chart needs `spec.h`."""
    if spec.chart == PROBE_SPRT:
        return _advance_sprt(spec, state, point)
    if spec.chart not in CUSUM_CHARTS:
        raise ValueError(f"unknown chart {spec.chart!r}")
    if spec.h is None or point.ai_confidence is None:
        raise ValueError("a CUSUM point needs the monitor's h and the AI's confidence")
    index = state.points + 1
    restarted = state.restart
    carried = 0.0 if restarted else state.statistic
    c = point.ai_confidence
    p = in_control_probability(spec.chart, c, spec.fit)
    step = cusum_step(carried, point.event, p, spec.odds_ratio, spec.h)
    excess = excess_term(spec.chart, c=c, e=point.event, p=p)
    run = (
        Run.starting(index, point, excess)
        if carried == 0.0 or state.run is None
        else state.run.extended(point, excess)
    )
    alarm = None
    if step.signal:
        alarm = AlarmDraft(not state.open_alarm, step.x, spec.h, run, run.excess, severity(run.excess))
        state.open_alarm = True
    state.points = index
    state.statistic = 0.0 if step.signal else step.x
    state.restart = step.signal
    state.run = None if step.signal else run
    return ChartPoint(
        index, point, restarted, p=p, w=step.w, x=step.x, signal=step.signal, alarm=alarm, run=run
    )


def _advance_sprt(spec: Spec, state: ChartState, point: Point) -> ChartPoint:
    sprt = spec.sprt or Sprt()
    index = state.points + 1
    restarted = state.restart or state.run is None
    carried = 0.0 if restarted else state.statistic
    step = sprt_step(sprt, carried, point.event)
    run = (
        Run.starting(index, point, 0.0) if restarted or state.run is None else state.run.extended(point, 0.0)
    )
    excess = run.misses - sprt.p0 * run.points
    run = replace(run, excess=excess)
    alarm = None
    if step.conclusion == "h1":
        alarm = AlarmDraft(
            not state.open_alarm, step.llr_sum, sprt.upper_bound, run, excess, severity(excess)
        )
        state.open_alarm = True
    concluded = step.conclusion is not None
    state.points = index
    state.statistic = 0.0 if concluded else step.llr_sum
    state.restart = concluded
    state.run = None if concluded else run
    return ChartPoint(
        index,
        point,
        restarted,
        llr=step.llr,
        llr_sum=step.llr_sum,
        conclusion=step.conclusion,
        alarm=alarm,
        run=run,
    )


def restart(state: ChartState) -> None:
    """X (or S) carried as 0 into the next point, which shows `restart: true`: after a change of
    h, re-enabling the monitor, or an applied calibration."""
    state.statistic = 0.0
    state.restart = True
    state.run = None


def acknowledged(state: ChartState) -> None:
    """An acknowledgement of one of the monitor's alarms: the open alarm is closed and the chart
    restarts with the first point after it."""
    state.open_alarm = False
    restart(state)
