"""`python3 -m audit.offline_verify --drift EXPORT [SERIES ...]` (audit/offline_drift.py,
drift/replay.py) on chains written by hand from the reference (docs/reference/drift.md): the
worked example's alarms, repeat signal and acknowledgement recomputed and matched entry by entry
and point by point, and every kind of disagreement reported."""

import io
import json
import math
from pathlib import Path

import pytest

from audit import offline_verify

W = math.log(2) - math.log(1.3)  # following at c = 0.3 against pi(0.3) = 0.3, R = 2


class Chain:
    """An export written entry by entry, with the members the verifier reads."""

    def __init__(self) -> None:
        self.lines: list[dict] = []

    def add(self, kind: str, **members) -> int:
        sequence = len(self.lines) + 1
        self.lines.append({"sequence": sequence, "type": kind, "entry_id": f"aud_{sequence}", **members})
        return sequence

    def decision(self, n: str, c: float | None, followed: bool, user: str = "rev-1", **more) -> int:
        members = {
            "decision_id": n, "user_id": user, "model_id": "loan", "model_version": "1", "ai_recommendation": "approve",
            "ai_confidence": c, "user_decision": "approve" if followed else "deny", "followed_ai": followed,
            "outcome": None, "timestamp": f"2026-11-27T10:{len(self.lines) % 60:02d}:00.000Z", "erased": False,
        }  # fmt: skip
        members.update(more)
        return self.add(more.pop("type", "decision"), **members)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def configured(monitor_id="mon_1", chart="over_reliance", **more) -> dict:
    data = {
        "monitor_id": monitor_id, "action": "created", "changes": [], "chart": chart, "scope": "user",
        "user_id": "rev-1", "model_id": "loan", "model_version": None, "odds_ratio": 2.0, "h": 4.0, "h_source": "given",
        "arl0_target": None, "baseline": {"mode": "next", "decisions": 200}, "sprt": None, "seed": 1, "runs": 2000,
        "enabled": True,
    }  # fmt: skip
    data.update(more)
    return data


FIT = {"method": "mle", "intercept": -2.369559, "slope": 5.074204, "followed": 120}


def worked_example(chain: Chain, acknowledge_after: int | None = 24) -> dict:
    """The reference's worked example: the baseline, then 34 decisions followed at c = 0.3."""
    chain.decision("before", 0.3, True)  # before the monitor: never a point
    chain.add("drift_monitor.configured", **configured())
    first = None
    for i in range(100):
        s = chain.decision(f"b{i}a", 0.3, i < 30)
        first = first or s
        last = chain.decision(f"b{i}b", 0.9, i < 90)
    chain.decision("other", 0.3, True, user="rev-2")  # another reviewer: not a point
    chain.decision("probe", 0.3, True, probe={"kind": "known_wrong", "correct_decision": "deny"})
    chain.decision("unscored", None, True)
    chain.add(
        "drift_monitor.baseline_completed", monitor_id="mon_1", chart="over_reliance", status="live",
        baseline={"mode": "next", "decisions": 200, "first_sequence": first, "last_sequence": last, "fit": FIT},
    )  # fmt: skip
    sequences = {}
    for k in range(1, 35):
        sequences[k] = chain.decision(f"loan-{k}", 0.3, True)
        if k == 10:
            run = {
                "start_index": 1, "points": 10, "first_sequence": sequences[1], "last_sequence": sequences[10],
                "decision_time_from": chain.lines[sequences[1] - 1]["timestamp"],
                "decision_time_to": chain.lines[sequences[10] - 1]["timestamp"],
            }  # fmt: skip
            chain.add(
                "drift_alarm.raised", alarm_id="alm_1", monitor_id="mon_1", chart="over_reliance", user_id="rev-1",
                point_index=10, decision_id="loan-10", decision_sequence=sequences[10], statistic=round(10 * W, 6),
                threshold=4.0, run=run, excess=2.8, severity="medium",
            )  # fmt: skip
        if k == acknowledge_after:
            chain.add(
                "drift_alarm.acknowledged",
                alarm_id="alm_1",
                monitor_id="mon_1",
                disposition="reviewer_coached",
            )
        if k == 34 and acknowledge_after == 24:
            run = {
                "start_index": 25, "points": 10, "first_sequence": sequences[25], "last_sequence": sequences[34],
                "decision_time_from": min(chain.lines[sequences[j] - 1]["timestamp"] for j in range(25, 35)),
                "decision_time_to": max(chain.lines[sequences[j] - 1]["timestamp"] for j in range(25, 35)),
            }  # fmt: skip
            chain.add(
                "drift_alarm.raised", alarm_id="alm_2", monitor_id="mon_1", chart="over_reliance", user_id="rev-1",
                point_index=34, decision_id="loan-34", decision_sequence=sequences[34], statistic=round(10 * W, 6),
                threshold=4.0, run=run, excess=2.8, severity="medium",
            )  # fmt: skip
    return sequences


def series(chain: Chain, sequences: dict, restarts_after: set[int]) -> dict:
    """The series the reference describes, computed here by hand: X climbs by W from each restart."""
    data, x, open_alarm = [], 0.0, None
    for k, sequence in sequences.items():
        restart = k == 1 or (k - 1) in restarts_after
        x = (0.0 if restart else x) + W
        signal = x >= 4.0 - 1e-9
        if signal and open_alarm is None:
            open_alarm = "alm_1" if k == 10 else "alm_2"
        data.append({
            "index": k, "sequence": sequence, "decision_id": f"loan-{k}", "user_id": "rev-1",
            "timestamp": chain.lines[sequence - 1]["timestamp"], "ai_confidence": 0.3, "event": 1, "p": 0.3,
            "w": round(W, 6), "x": round(x, 6), "restart": restart, "signal": signal,
            "alarm_id": open_alarm if signal else None,
        })  # fmt: skip
        if signal:
            restarts_after = restarts_after | {k}
        if k == 24:
            open_alarm = None
    return {"monitor_id": "mon_1", "chart": "over_reliance", "h": 4.0, "data": data, "pagination": {}}


def verify(tmp_path: Path, chain: Chain, *pages: dict) -> tuple[int, str]:
    export = chain.write(tmp_path / "export.ndjson")
    paths = []
    for n, page in enumerate(pages):
        paths.append(tmp_path / f"series{n}.json")
        paths[-1].write_text(json.dumps(page))
    out = io.StringIO()
    status = offline_verify.main(["--drift", str(export), *map(str, paths)], out)
    return status, out.getvalue()


def test_the_worked_example_is_recomputed_entry_by_entry_and_point_by_point(tmp_path):
    chain = Chain()
    sequences = worked_example(chain)
    page = series(chain, sequences, restarts_after={24})
    assert [p["index"] for p in page["data"] if p["signal"]] == [10, 20, 34]
    status, text = verify(tmp_path, chain, page)
    assert status == 0, text
    assert (
        "OK: monitor mon_1 (over_reliance, rev-1): 34 points, 2 alarm(s), 3 drift entries checked, 34 series"
        in text
    )


def test_the_series_may_come_as_several_pages(tmp_path):
    chain = Chain()
    page = series(chain, worked_example(chain), restarts_after={24})
    first, second = dict(page, data=page["data"][:20]), dict(page, data=page["data"][20:])
    export = chain.write(tmp_path / "export.ndjson")
    (tmp_path / "pages.json").write_text(json.dumps([first, second]))
    out = io.StringIO()
    assert offline_verify.main(["--drift", str(export), str(tmp_path / "pages.json")], out) == 0, (
        out.getvalue()
    )


def test_a_changed_decision_moves_the_chart_and_is_reported(tmp_path):
    chain = Chain()
    sequences = worked_example(chain)
    page = series(chain, sequences, restarts_after={24})
    chain.lines[sequences[5] - 1]["followed_ai"] = False  # the chain says overrode at point 5
    status, text = verify(tmp_path, chain, page)
    assert status == 1
    assert "MISMATCH: monitor mon_1" in text
    assert "series point 5: event is 1, recomputed 0" in text
    assert "entry" in text and "an alarm at point 10, which raised none" in text


def test_a_missing_alarm_entry_and_a_wrong_statistic_are_reported(tmp_path):
    chain = Chain()
    worked_example(chain)
    raised = [line for line in chain.lines if line["type"] == "drift_alarm.raised"]
    raised[0]["statistic"] = 4.31
    raised[0]["severity"] = "high"
    chain.lines.remove(raised[1])
    status, text = verify(tmp_path, chain)
    assert status == 1
    assert f"entry {raised[0]['sequence']}: statistic is 4.31, recomputed 4.307829" in text
    assert "severity is 'high', recomputed 'medium'" in text
    assert "point 34 (entry" in text and "raises an alarm the chain does not record" in text


def test_without_the_acknowledgement_the_chain_must_record_no_second_alarm(tmp_path):
    chain = Chain()
    sequences = worked_example(chain, acknowledge_after=None)
    page = series(chain, sequences, restarts_after=set())
    page["data"] = [dict(p, alarm_id="alm_1" if p["signal"] else None) for p in page["data"]]
    assert [p["index"] for p in page["data"] if p["signal"]] == [10, 20, 30]
    status, text = verify(tmp_path, chain, page)
    assert status == 0, text


def test_a_wrong_fit_in_the_baseline_entry_is_reported(tmp_path):
    chain = Chain()
    worked_example(chain)
    completed = next(line for line in chain.lines if line["type"] == "drift_monitor.baseline_completed")
    completed["baseline"]["fit"] = dict(FIT, slope=5.0742)
    status, text = verify(tmp_path, chain)
    assert status == 1 and "baseline fit is" in text


def test_a_previous_baseline_a_paused_monitor_and_an_h_change(tmp_path):
    chain = Chain()
    for i in range(100):
        chain.decision(f"b{i}a", 0.3, i < 30)
        chain.decision(f"b{i}b", 0.9, i < 90)
    chain.add(
        "drift_monitor.configured", **configured(baseline={"mode": "previous", "decisions": 200}, h=100.0)
    )
    chain.add(
        "drift_monitor.baseline_completed", monitor_id="mon_1", status="live",
        baseline={"mode": "previous", "decisions": 200, "first_sequence": 1, "last_sequence": 200, "fit": FIT},
    )  # fmt: skip
    for k in range(1, 4):
        chain.decision(f"a{k}", 0.3, True)  # points 1-3
    chain.add(
        "drift_monitor.configured",
        **configured(action="updated", changes=["enabled"], enabled=False, h=100.0),
    )
    chain.decision("paused", 0.3, True)  # not a point
    chain.add("drift_monitor.configured", **configured(action="updated", changes=["enabled", "h"], h=4.0))
    seqs = {k: chain.decision(f"c{k}", 0.3, True) for k in range(4, 14)}  # restart at 4; signal at 13
    status, text = verify(tmp_path, chain)
    assert status == 1, text  # the alarm at point 13 is not in the chain
    assert f"point 13 (entry {seqs[13]}) raises an alarm" in text
    assert "3 drift" not in text and "13 points" in text


def test_the_ai_calibration_chart_takes_each_decisions_first_outcome(tmp_path):
    chain = Chain()
    chain.add(
        "drift_monitor.configured",
        **configured(chart="ai_calibration_up", scope="organization", user_id=None, baseline=None, h=1.0),
    )
    chain.decision("x1", 0.5, True)  # no outcome yet: not a point
    chain.decision("x2", 0.5, True, outcome="deny")  # point 1: the AI wrong
    chain.decision("x1", 0.5, True, outcome="deny", type="outcome")  # point 2: x1's first outcome, wrong
    chain.decision("x2", 0.5, True, outcome="APPROVE ", type="outcome")  # a second outcome: not a point
    chain.decision("x3", 0.5, True, outcome="Deny", user="rev-9")  # point 3, any reviewer
    last = chain.decision("x4", 0.5, True, outcome="no", model_id="loan")  # point 4: X = 1.15 >= 1
    status, text = verify(tmp_path, chain)
    assert status == 1 and f"point 4 (entry {last}) raises an alarm" in text and "4 points" in text


def test_the_probe_sprt_and_its_conclusions(tmp_path):
    chain = Chain()
    sprt = {"p0": 0.1, "p1": 0.3, "alpha": 0.05, "beta": 0.1}
    chain.add(
        "drift_monitor.configured",
        **configured(chart="probe_sprt", h=None, odds_ratio=None, baseline=None, sprt=sprt),
    )
    probe = {"kind": "known_wrong", "correct_decision": "deny"}
    seqs = [chain.decision(f"p{k}", 0.4, True, probe=probe) for k in range(1, 4)]
    chain.decision(
        "right", 0.4, True, probe={"kind": "known_right", "correct_decision": "approve"}
    )  # not a point
    common = {"monitor_id": "mon_1", "user_id": "rev-1", "model_id": "loan", "upper_bound": 2.890372}
    chain.add(
        "probe_sprt.concluded", **common, conclusion="h1", probes=3, misses=3, llr_sum=3.295837,
        point_index=3, decision_id="p3", decision_sequence=seqs[2], alarm_id="alm_9",
    )  # fmt: skip
    chain.add(
        "drift_alarm.raised", alarm_id="alm_9", monitor_id="mon_1", chart="probe_sprt", point_index=3,
        decision_id="p3", decision_sequence=seqs[2], statistic=3.295837, threshold=2.890372, excess=2.7,
        severity="medium", run={"start_index": 1, "points": 3, "first_sequence": seqs[0], "last_sequence": seqs[2],
        "decision_time_from": chain.lines[seqs[0] - 1]["timestamp"], "decision_time_to": chain.lines[seqs[2] - 1]["timestamp"]},
    )  # fmt: skip
    caught = [chain.decision(f"q{k}", 0.4, False, probe=probe) for k in range(1, 10)]
    chain.add(
        "probe_sprt.concluded", **common, conclusion="h0", probes=9, misses=0, llr_sum=-2.26183,
        point_index=12, decision_id="q9", decision_sequence=caught[-1], alarm_id=None,
    )  # fmt: skip
    status, text = verify(tmp_path, chain)
    assert status == 0, text
    assert "12 points, 1 alarm(s), 3 drift entries checked" in text
    chain.lines[-1]["probes"] = 12
    status, text = verify(tmp_path, chain)
    assert status == 1 and "probes is 12, recomputed 9" in text


def test_an_erased_reviewers_monitor_is_not_recomputable(tmp_path):
    chain = Chain()
    chain.add(
        "drift_monitor.configured", **configured(user_id=None, baseline=None, chart="ai_calibration_up")
    )
    status, text = verify(tmp_path, chain)
    assert status == 0 and "NOT RECOMPUTABLE: monitor mon_1" in text and "erased" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "export line 1 is not JSON"),
        ('{"type": "decision"}\n', "export line 1 is not an audit entry"),
    ],
)
def test_an_unreadable_export_exits_2(tmp_path, content, message):
    export = tmp_path / "export.ndjson"
    export.write_text(content)
    out = io.StringIO()
    assert offline_verify.main(["--drift", str(export)], out) == 2
    assert message in out.getvalue()


def test_a_series_that_is_not_one_exits_2(tmp_path):
    chain = Chain()
    worked_example(chain)
    status, text = verify(tmp_path, chain, {"data": "nope"})
    assert status == 2 and "not the JSON of GET /drift-monitors/{id}/series" in text
