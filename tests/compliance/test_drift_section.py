"""The reports' drift monitoring member from plain rows (docs/reference/reports.md, Drift
monitoring): monitors with their expected false alarms, alarms as they stood at the period's
end, what a report without the per-person permission leaves out, the alarms that hold the EU
report at NEEDS_REVIEW, the recommendations, the printed figures and the chart."""

import datetime as dt

from compliance import drift_print, drift_report
from compliance.charts import drift_chart

START = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
END = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)  # 31 days


def at(day: int, hour: int = 0) -> dt.datetime:
    return START + dt.timedelta(days=day, hours=hour)


def monitor(monitor_id: str, scope: str = "user", **more) -> dict:
    row = {
        "monitor_id": monitor_id, "name": f"over_reliance {monitor_id}", "chart": "over_reliance", "scope": scope,
        "user_id": "rev-1" if scope == "user" else None, "model_id": "loan", "model_version": None,
        "odds_ratio": 2.0, "h": 5.603, "h_source": "calibrated", "arl0_target": 10000,
        "calibration": {"arl0": 10000.0, "arl0_se": 69.8, "arl1_r2": 136.7, "arl1_r3": 70.5},
        "baseline": {"decisions": 200, "fit": {"method": "mle"}}, "sprt": None,
        "status_at_period_end": "live", "points_in_period": 3100, "alarms_in_period": 1,
    }  # fmt: skip
    row.update(more)
    return row


def alarm(
    alarm_id: str, monitor_id: str, raised: dt.datetime, acknowledged: dt.datetime | None = None, **more
) -> dict:
    row = {
        "alarm_id": alarm_id, "monitor_id": monitor_id, "chart": "over_reliance", "user_id": "rev-1",
        "model_id": "loan", "raised_at": raised, "point_index": 40, "decision_id": "d-40", "statistic": 5.71,
        "threshold": 5.603, "excess": 2.8, "severity": "medium", "signals": 1, "acknowledged_at": acknowledged,
        "acknowledged_by": "staff:ana" if acknowledged else None, "disposition": "reviewer_coached" if acknowledged else None,
        "note": "talked it through" if acknowledged else None,
    }  # fmt: skip
    row.update(more)
    return row


ROWS = {
    "monitors": [monitor("mon_a"), monitor("mon_org", scope="organization", user_id=None)],
    "alarms": [
        alarm("alm_before_open", "mon_a", at(-5)),  # raised before, open at the end
        alarm("alm_before_acked", "mon_a", at(-5), at(2, 6)),  # raised before, acknowledged in the period
        alarm("alm_before_closed", "mon_a", at(-9), at(-2)),  # raised and acknowledged before: not listed
        alarm("alm_in_acked", "mon_org", at(3), at(3, 12), user_id=None, severity="high", excess=6.0),
        alarm("alm_in_late", "mon_a", at(20), at(40)),  # acknowledged after the end: open as at the end
        alarm("alm_suspended", "mon_org", at(10), at(11), user_id=None, disposition="use_suspended"),
        alarm("alm_after", "mon_a", at(31, 1)),  # raised after the end: not listed
    ],
    "sprt_conclusions": [
        {
            "monitor_id": "mon_s",
            "user_id": "rev-1",
            "model_id": None,
            "h0": 2,
            "h1": 1,
            "last_conclusion": "h1",
            "last_concluded_at": "2026-10-20T10:00:00.000Z",
        }
    ],
}


def test_the_section_lists_the_alarms_as_they_stood_at_the_periods_end():
    section = drift_report.section(ROWS, start=START, end=END, template="eu_ai_act", per_person=True)
    listed = {a["alarm_id"]: a for a in section["alarms"]}
    assert list(listed) == [
        "alm_in_late",
        "alm_suspended",
        "alm_in_acked",
        "alm_before_open",
        "alm_before_acked",
    ]
    assert listed["alm_before_open"]["in_period"] is False and listed["alm_before_open"]["status"] == "open"
    assert (
        listed["alm_before_acked"]["in_period"] is True
        and listed["alm_before_acked"]["status"] == "acknowledged"
    )
    late = listed["alm_in_late"]
    assert late["status"] == "open" and late["acknowledged_at"] is None and late["disposition"] is None
    assert late["note"] is None and late["hours_to_acknowledge"] is None
    acked = listed["alm_in_acked"]
    assert acked["hours_to_acknowledge"] == 12.0 and acked["acknowledged_at"] == "2026-10-04T12:00:00.000Z"
    assert acked["raised_at"] == "2026-10-04T00:00:00.000Z"
    assert section["totals"] == {
        "monitors": 2,
        "alarms_raised": 3,
        "alarms_open_at_period_end": 2,
        "by_severity": {"low": 0, "medium": 2, "high": 1},
        "by_disposition": {
            "false_alarm": 0, "reviewer_coached": 2, "workload_adjusted": 0, "model_retrained": 0,
            "use_suspended": 1, "other": 0,
        },
    }  # fmt: skip
    assert section["statement"].startswith("Alarms are risk-adjusted for the AI-confidence mix")
    assert "Art. 14(4)(b)" in section["evidences"] and "Art. 26(5)" in section["evidences"]


def test_a_monitor_row_carries_its_run_lengths_and_expected_false_alarms():
    section = drift_report.section(ROWS, start=START, end=END, template="eu_ai_act", per_person=True)
    row = section["monitors"][0]
    assert (
        row["arl0"] == 10000.0
        and row["arl0_se"] == 69.8
        and row["arl1_r2"] == 136.7
        and row["arl1_r3"] == 70.5
    )
    assert row["baseline_decisions"] == 200 and row["fit_method"] == "mle"
    # 30 x 3,100 points / 31 days / ARL0 10,000 = 0.3
    assert row["expected_false_alarms_per_30_days"] == 0.3
    given = drift_report.monitor_row(
        monitor("m", h_source="given", arl0_target=None, calibration=None), days=31
    )
    assert given["arl0"] is None and given["expected_false_alarms_per_30_days"] is None


def test_without_the_per_person_permission_reviewer_rows_are_withheld_and_counted():
    section = drift_report.section(ROWS, start=START, end=END, template="texas_traiga", per_person=False)
    assert [m["monitor_id"] for m in section["monitors"]] == ["mon_org"]
    assert {a["monitor_id"] for a in section["alarms"]} == {"mon_org"}
    assert section["sprt_conclusions"] == []
    assert (
        section["reviewers_withheld"].startswith("Withheld")
        and "EU AI Act" not in section["reviewers_withheld"]
    )
    assert section["totals"]["monitors"] == 2 and section["totals"]["alarms_raised"] == 3
    assert "NIST AI RMF" in section["evidences"] and "Art. 26(5)" not in section["evidences"]


def test_unacknowledged_alarms_hold_the_eu_report_for_review():
    assert drift_report.unacknowledged(ROWS, end=END) == ["alm_before_open", "alm_in_late"]
    assert drift_report.unacknowledged(ROWS, end=at(3, 6)) == ["alm_before_open", "alm_in_acked"]
    assert drift_report.unacknowledged({"alarms": []}, end=END) == []


def test_recommendations_name_open_alarms_and_suspended_use():
    section = drift_report.section(ROWS, start=START, end=END, template="eu_ai_act", per_person=True)
    recs = drift_report.recommendations(section)
    texts = [r["text"] for r in recs]
    assert [r["value"] for r in recs] == ["alm_in_late", "use_suspended"]
    assert "over-reliance drift alarm alm_in_late of reviewer rev-1 (severity medium, excess 2.80" in texts[0]
    assert "alm_suspended" in texts[1] and recs[1]["priority"] == "high"


def test_the_printed_figures():
    section = drift_report.section(ROWS, start=START, end=END, template="eu_ai_act", per_person=True)
    figures = drift_print.drift_monitoring(section)
    assert ("Alarms open at the period's end", "2") in figures["facts"]
    assert ("Raised, by severity", "1 high, 2 medium") in figures["facts"]
    first = figures["monitors"][0]
    assert first["arl0"] == "target 10,000, achieved 10,000.0 ± 69.8" and first["arl1"] == "136.7 / 70.5"
    assert first["limit"] == "h 5.603 (calibrated), R 2" and first["baseline"] == "200 (mle)"
    acked = next(a for a in figures["alarms"] if a["alarm_id"] == "alm_in_acked")
    assert (
        acked["triage"]
        == "acknowledged 2026-10-04 12:00:00 UTC by staff:ana, after 12.0 h: reviewer coached. talked it through"
    )
    assert (
        acked["watches"] == "over-reliance of organisation"
        and acked["statistic"] == "5.710 ≥ 5.603 at point 40"
    )
    assert figures["sprt"][0]["last"] == "h1 at 2026-10-20 10:00:00 UTC"


def test_the_chart_draws_the_statistic_the_limit_signals_and_restarts():
    points = [
        {"index": i, "x": 0.43 * (i % 10), "restart": i % 10 == 1, "signal": i % 10 == 0}
        for i in range(1, 41)
    ]
    svg = drift_chart(points, h=4.0, title="over-reliance rev-1")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert drift_chart(points, h=4.0, title="over-reliance rev-1") == svg  # the same data, the same bytes
    without_signals = [dict(p, signal=False) for p in points]
    # each signal is a marker (and the legend names them): drawing none removes them
    assert svg.count("<use") > drift_chart(without_signals, h=4.0, title="over-reliance rev-1").count("<use")
    assert drift_chart(points, h=3.0, title="over-reliance rev-1") != svg
    sprt = [
        {"index": i, "llr_sum": 1.1 * i, "restart": i == 1, "conclusion": "h1" if i == 3 else None}
        for i in (1, 2, 3)
    ]
    assert "<svg" in drift_chart(sprt, h=2.890372, title="probe SPRT", lower=-2.251292)
