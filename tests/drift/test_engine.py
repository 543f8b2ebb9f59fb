"""A monitor's chart point by point (docs/reference/drift.md, The charts): restarts, the alarm's
run with its excess and severity, repeat signals of an open alarm, acknowledgements, and the
probe SPRT's conclusions, on the reference's worked examples and hand-built sequences."""

import datetime as dt

import pytest

from drift.charts import Sprt, fit_follow_model
from drift.engine import ChartState, Point, Spec, acknowledged, advance, restart

T0 = dt.datetime(2026, 11, 27, 10, 0, tzinfo=dt.UTC)
FIT = fit_follow_model([(0.3, 1)] * 30 + [(0.3, 0)] * 70 + [(0.9, 1)] * 90 + [(0.9, 0)] * 10)


def point(n: int, c: float | None = 0.3, e: int = 1, minutes: int | None = None) -> Point:
    when = T0 + dt.timedelta(minutes=n if minutes is None else minutes)
    return Point(
        sequence=212 + n, decision_id=f"loan-{n}", user_id="rev-1", timestamp=when, ai_confidence=c, event=e
    )


def test_the_worked_example_alarm_run_excess_and_repeat_signal():
    spec, state = Spec("over_reliance", 2.0, 4.0, FIT), ChartState()
    charted = [advance(spec, state, point(n)) for n in range(1, 25)]
    first = charted[0]
    assert first.restart and first.index == 1
    assert first.wire() == {
        "index": 1, "sequence": 213, "decision_id": "loan-1", "user_id": "rev-1", "timestamp": T0 + dt.timedelta(minutes=1),
        "event": 1, "ai_confidence": 0.3, "p": 0.3, "w": 0.430783, "x": 0.430783, "restart": True, "signal": False,
    }  # fmt: skip
    tenth = charted[9]
    assert tenth.signal and round(tenth.x, 6) == 4.307829
    alarm = tenth.alarm
    assert (
        alarm is not None
        and alarm.new_alarm
        and alarm.threshold == 4.0
        and round(alarm.statistic, 6) == 4.307829
    )
    assert alarm.run.as_dict() == {
        "start_index": 1, "points": 10, "first_sequence": 213, "last_sequence": 222,
        "decision_time_from": T0 + dt.timedelta(minutes=1), "decision_time_to": T0 + dt.timedelta(minutes=10),
    }  # fmt: skip
    assert round(alarm.excess, 4) == 2.8 and alarm.severity == "medium"
    # the point after a signal restarts; the open alarm takes the next signal without a new alarm
    assert charted[10].restart and not charted[11].restart
    twentieth = charted[19]
    assert twentieth.signal and twentieth.alarm is not None and not twentieth.alarm.new_alarm
    assert twentieth.alarm.run.start_index == 11 and twentieth.alarm.run.points == 10
    assert [c.index for c in charted if c.signal] == [10, 20]
    # acknowledged after point 24: the next alarm is at 34, a new one
    acknowledged(state)
    assert state.statistic == 0.0 and not state.open_alarm
    later = [advance(spec, state, point(n)) for n in range(25, 35)]
    assert later[0].restart
    assert [c.index for c in later if c.signal] == [34] and later[-1].alarm.new_alarm


def test_without_the_acknowledgement_the_signals_come_every_ten_points():
    spec, state = Spec("over_reliance", 2.0, 4.0, FIT), ChartState()
    charted = [advance(spec, state, point(n)) for n in range(1, 35)]
    assert [c.index for c in charted if c.signal] == [10, 20, 30]
    assert [c.alarm.new_alarm for c in charted if c.alarm] == [True, False, False]


def test_the_run_starts_after_the_chart_last_stood_at_0():
    # ai_calibration_up at c = 0.5, R = 2, h = 1: wrong +0.287682, right -0.405465
    spec, state = Spec("ai_calibration_up", 2.0, 1.0), ChartState()
    events = [1, 0, 0, 1, 1, 0, 1, 1, 1]
    charted = [advance(spec, state, point(n, c=0.5, e=e, minutes=100 - n)) for n, e in enumerate(events, 1)]
    # X: .288, 0, 0, .288, .575, .170, .457, .745, 1.033 -> signal at 9; X last 0 after point 3
    assert [c.index for c in charted if c.signal] == [9]
    assert not any(c.restart for c in charted[1:])  # a floor at 0 is not a restart
    run = charted[-1].alarm.run
    assert (run.start_index, run.points, run.first_sequence, run.last_sequence) == (4, 6, 216, 221)
    # back-filled decisions: the run's times are its earliest and latest decision times
    assert run.decision_time_from == T0 + dt.timedelta(
        minutes=91
    ) and run.decision_time_to == T0 + dt.timedelta(minutes=96)
    # excess = sum over the run of (c - y) = 0.5 per wrong, -0.5 per right: 5 wrong, 1 right
    assert charted[-1].alarm.excess == pytest.approx(2.0) and charted[-1].alarm.severity == "medium"


def test_a_restart_from_outside_carries_0_and_marks_the_next_point():
    spec, state = Spec("under_reliance", 2.0, 50.0, FIT), ChartState()
    for n in range(1, 6):
        advance(spec, state, point(n, c=0.9, e=1))
    assert state.statistic > 0
    restart(state)  # h changed, re-enabled, or a calibration applied
    assert state.statistic == 0.0
    again = advance(spec, state, point(6, c=0.9, e=1))
    assert again.restart and again.index == 6 and again.run.start_index == 6


def test_an_over_reliance_alarm_at_confident_cases_has_no_excess():
    spec, state = Spec("over_reliance", 2.0, 0.4, FIT), ChartState()
    charted = [advance(spec, state, point(n, c=0.6, e=1)) for n in range(1, 20)]
    alarms = [c.alarm for c in charted if c.alarm]
    assert alarms and alarms[0].excess == 0.0 and alarms[0].severity == "low"


def test_the_sprt_worked_example_concludes_h1_then_h0():
    spec, state = Spec("probe_sprt", sprt=Sprt()), ChartState()
    charted = [advance(spec, state, point(n, c=None, e=e)) for n, e in enumerate([1, 1, 1] + [0] * 9, 1)]
    third = charted[2]
    assert third.conclusion == "h1" and round(third.llr_sum, 6) == 3.295837
    assert third.alarm is not None and third.alarm.new_alarm and round(third.alarm.threshold, 6) == 2.890372
    assert third.run.points == 3 and third.run.misses == 3
    assert third.alarm.excess == pytest.approx(3 - 0.3) and third.alarm.severity == "medium"
    last = charted[-1]
    assert last.conclusion == "h0" and round(last.llr_sum, 6) == -2.26183 and last.alarm is None
    assert charted[3].restart and last.run.points == 9 and last.run.misses == 0
    assert last.wire() == {
        "index": 12, "sequence": 224, "decision_id": "loan-12", "user_id": "rev-1", "timestamp": T0 + dt.timedelta(minutes=12),
        "event": 0, "llr": -0.251314, "llr_sum": -2.26183, "restart": False, "conclusion": "h0",
    }  # fmt: skip
    # three more misses: h1 again while the first alarm is open, a repeat signal
    more = [advance(spec, state, point(n, c=None, e=1)) for n in (13, 14, 15)]
    assert more[-1].conclusion == "h1" and not more[-1].alarm.new_alarm


def test_bad_points_are_refused():
    with pytest.raises(ValueError):
        advance(Spec("over_reliance", 2.0, None, FIT), ChartState(), point(1))
    with pytest.raises(ValueError):
        advance(Spec("ai_calibration_up", 2.0, 3.0), ChartState(), point(1, c=None))
    with pytest.raises(ValueError):
        advance(Spec("team_reliance", 2.0, 3.0), ChartState(), point(1))


def test_a_state_stored_as_json_continues_the_chart_exactly():
    import json

    spec = Spec("over_reliance", 2.0, 4.0, FIT)
    straight, stored = ChartState(), ChartState()
    for n in range(1, 16):
        expected = advance(spec, straight, point(n, c=0.3 if n % 3 else 0.9, e=n % 2))
        stored = ChartState.from_json(json.loads(json.dumps(stored.to_json())))
        assert advance(spec, stored, point(n, c=0.3 if n % 3 else 0.9, e=n % 2)) == expected
    assert stored == straight
