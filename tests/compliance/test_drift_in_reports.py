"""Drift monitoring in both report templates (docs/reference/reports.md, Drift monitoring), on
the real database: the member under its section, the NEEDS_REVIEW rule for an alarm not
acknowledged by the period's end, the recommendation, what a report without the per-person
permission leaves out, and the PDF's chart of a monitor with an alarm."""

import datetime as dt
import json

import pytest

from compliance import pdf
from compliance.evidence import Scope
from compliance.report import report_build
from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from keys.models import Customer
from tests.compliance.helpers import at, export_file, seed

pytestmark = pytest.mark.django_db

NOW = dt.datetime.now(dt.UTC)


def monitor(
    customer: Customer, monitor_id: str, *, scope: str = "user", sequence: int = 1, **more
) -> DriftMonitor:
    fields = {
        "id": monitor_id, "customer": customer, "name": f"over_reliance {monitor_id}", "chart": "over_reliance",
        "scope": scope, "user_id": "ana" if scope == "user" else None, "model_id": None, "odds_ratio": 2.0,
        "h": 4.0, "h_source": "given", "seed": 1, "runs": 2000, "status": "live", "configured_sequence": sequence,
        "baseline": {"mode": "previous", "decisions": 50, "completed_at": "2020-01-01T00:00:00.000Z",
                     "fit": {"method": "mle", "intercept": -2.0, "slope": 5.0, "followed": 30}},
        "created_at": NOW - dt.timedelta(days=30),
    }  # fmt: skip
    fields.update(more)
    return DriftMonitor.objects.create(**fields)


def alarm(
    mon: DriftMonitor, alarm_id: str, *, raised: dt.datetime, acked: dt.datetime | None = None
) -> DriftAlarm:
    return DriftAlarm.objects.create(
        id=alarm_id, customer=mon.customer, monitor=mon, monitor_snapshot={}, chart=mon.chart, user_id=mon.user_id,
        model_id=None, point_index=10, decision_id="dec-10", decision_sequence=10, statistic=4.3078291,
        threshold=4.0, run={"start_index": 1, "points": 10}, excess=2.80001, severity="medium", signals=2,
        last_signal_index=20, last_signal_sequence=20, raised_at=raised, entry_sequence=11,
        acknowledged_at=acked, acknowledged_by="staff:officer" if acked else None,
        disposition="reviewer_coached" if acked else None, note="coached" if acked else None,
        status="acknowledged" if acked else "open",
    )  # fmt: skip


def points(mon: DriftMonitor, sequences: range) -> None:
    x = 0.0
    rows = []
    for index, sequence in enumerate(sequences, start=1):
        x = 0.0 if index % 10 == 1 else x
        x += 0.430783
        rows.append(DriftPoint(
            monitor=mon, index=index, sequence=sequence, decision_id=f"dec-{sequence}", user_id="ana",
            timestamp=NOW, ai_confidence=0.3, event=1, p=0.3, w=0.430783, x=x, restart=index % 10 == 1,
            signal=index % 10 == 0, alarm_id="alm_1" if index % 10 == 0 else None,
        ))  # fmt: skip
    DriftPoint.objects.bulk_create(rows)


@pytest.fixture
def drift_customer(api):
    seed(api, 40)  # 40 entries appended now, so points of sequences 1-40 fall in the period
    customer = Customer.objects.get(pk="acme")
    reviewer = monitor(customer, "mon_ana")
    organisation = monitor(customer, "mon_org", scope="organization", sequence=2)
    points(reviewer, range(1, 31))
    # Both alarms' events of today fall between today's start (UTC) and now, whatever the time of
    # day: a period that ends yesterday sees alm_2 raised and open, and alm_1 not yet raised.
    now = dt.datetime.now(dt.UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    acked = today + (now - today) / 4
    alarm(reviewer, "alm_1", raised=today + (now - today) / 2)  # open at the period's end
    alarm(organisation, "alm_2", raised=acked - dt.timedelta(hours=24), acked=acked)
    return customer


def test_both_templates_carry_the_member_and_the_eu_status_names_the_open_alarm(api, drift_customer):
    period = {"from": at(10)[:10], "to": at(0)[:10]}
    _, content = export_file(api, template="eu_ai_act", format="json", time_period=period)
    report = json.loads(content)
    drift = report["sections"]["trust_calibration_analysis"]["drift_monitoring"]
    assert [m["monitor_id"] for m in drift["monitors"]] == ["mon_ana", "mon_org"]
    ana = drift["monitors"][0]
    assert ana["points_in_period"] == 30 and ana["alarms_in_period"] == 1 and ana["fit_method"] == "mle"
    assert ana["status_at_period_end"] == "live" and ana["expected_false_alarms_per_30_days"] is None
    alarms = {a["alarm_id"]: a for a in drift["alarms"]}
    assert alarms["alm_1"]["status"] == "open" and alarms["alm_1"]["statistic"] == 4.307829
    assert alarms["alm_1"]["excess"] == 2.8 and alarms["alm_1"]["signals"] == 2
    assert alarms["alm_2"]["status"] == "acknowledged" and alarms["alm_2"]["hours_to_acknowledge"] == 24.0
    assert drift["totals"]["alarms_raised"] == 2 and drift["totals"]["alarms_open_at_period_end"] == 1
    summary = report["sections"]["executive_summary"]
    assert report["summary"]["compliance_status"] == "NEEDS_REVIEW"
    assert summary["compliance_status_reason"] == (
        "1 drift alarm(s) raised before the period's end not acknowledged by it: alm_1."
    )
    recs = [r for r in report["sections"]["recommendations"] if r["figure"] == "drift_alarm"]
    assert [r["value"] for r in recs] == ["alm_1"] and "reviewer ana" in recs[0]["text"]
    _, texas = export_file(api, template="texas_traiga", format="json", time_period=period)
    section = json.loads(texas)["sections"]["monitoring_and_safeguards"]["drift_monitoring"]
    assert section["totals"] == drift["totals"] and "NIST AI RMF" in section["evidences"]
    # the csv format's status follows the same rule
    job, _ = export_file(api, template="eu_ai_act", format="csv", time_period=period)
    assert job["compliance_status"] == "NEEDS_REVIEW"


def test_an_acknowledged_alarm_no_longer_holds_the_status(api, drift_customer):
    DriftAlarm.objects.filter(pk="alm_1").update(
        status="acknowledged", acknowledged_at=dt.datetime.now(dt.UTC), disposition="false_alarm"
    )
    period = {"from": at(10)[:10], "to": at(0)[:10]}
    _, content = export_file(api, template="eu_ai_act", format="json", time_period=period)
    report = json.loads(content)
    assert "drift alarm" not in report["sections"]["executive_summary"]["compliance_status_reason"]
    # a period that ended before the acknowledgement still shows it open
    yesterday = {"from": at(10)[:10], "to": at(1)[:10]}
    _, earlier = export_file(api, template="eu_ai_act", format="json", time_period=yesterday)
    older = json.loads(earlier)["sections"]["trust_calibration_analysis"]["drift_monitoring"]
    assert [(a["alarm_id"], a["status"]) for a in older["alarms"]] == [("alm_2", "open")]


def test_without_the_per_person_permission_reviewer_monitors_are_withheld(drift_customer):
    start = NOW - dt.timedelta(days=10)
    scope = Scope(
        customer=drift_customer, start=start, end=NOW + dt.timedelta(days=1),
        time_period={"from": start.date().isoformat(), "to": NOW.date().isoformat()}, per_person=False,
    )  # fmt: skip
    report = report_build(scope=scope, template="eu_ai_act")
    drift = report.data["sections"]["trust_calibration_analysis"]["drift_monitoring"]
    assert [m["monitor_id"] for m in drift["monitors"]] == ["mon_org"]
    assert [a["alarm_id"] for a in drift["alarms"]] == ["alm_2"]
    assert drift["reviewers_withheld"].startswith("Withheld") and drift["totals"]["monitors"] == 2
    assert "ana" not in json.dumps(drift)


def test_the_pdf_prints_the_tables_and_a_chart_per_monitor_with_an_alarm(drift_customer):
    start = NOW - dt.timedelta(days=10)
    scope = Scope(
        customer=drift_customer, start=start, end=NOW + dt.timedelta(days=1),
        time_period={"from": start.date().isoformat(), "to": NOW.date().isoformat()},
    )  # fmt: skip
    html = pdf.report_html(report_build(scope=scope, template="eu_ai_act"))
    part = html[html.index('class="oversight drift"') : html.index("Each CUSUM chart adds W")]
    assert "over_reliance mon_ana" in part and "not acknowledged by the period" in part
    assert "reviewer coached. coached" in part
    # mon_ana has points in the period: its chart; mon_org has none, so no chart
    assert part.count("data:image/svg+xml;base64,") == 1
    assert "statistic against its point index over the period" in part
