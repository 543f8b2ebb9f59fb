"""The reports' `drift_monitoring` member (docs/reference/reports.md, Drift monitoring; the
monitors themselves are docs/reference/drift.md): the monitors in force in the period with their
parameters and achieved ARL0, the alarms of the period as they stood at its end, the SPRT
conclusions per reviewer, and their totals. Built from the rows `drift.reporting` reads; free of
the database, so the status rule and the recommendations can be checked on plain rows."""

import datetime as dt
from collections.abc import Mapping

from compliance import citations
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from drift.reporting import AlarmRow, MonitorRow, ReportRows

STATEMENT = (
    "Alarms are risk-adjusted for the AI-confidence mix: each decision is compared with what the "
    "monitor's baseline did at the same AI confidence, so a shift towards cases the AI is sure of "
    "raises no alarm by itself. An alarm is a prompt to review, not a finding; a monitor's ARL0 is "
    "the average number of its chart points between false alarms while behaviour matches its "
    "baseline."
)
SEVERITIES = ("low", "medium", "high")
DISPOSITIONS = (
    "false_alarm",
    "reviewer_coached",
    "workload_adjusted",
    "model_retrained",
    "use_suspended",
    "other",
)
MONITOR_FIELDS = (
    "monitor_id",
    "name",
    "chart",
    "scope",
    "user_id",
    "model_id",
    "model_version",
    "odds_ratio",
    "h",
    "h_source",
    "arl0_target",
)
ALARM_FIELDS = (
    "alarm_id",
    "monitor_id",
    "chart",
    "user_id",
    "model_id",
    "point_index",
    "decision_id",
    "statistic",
    "threshold",
    "excess",
    "severity",
    "signals",
)


def monitor_row(monitor: MonitorRow, *, days: float) -> JSONObject:
    """A monitor in force in the period, with its calibration's figures and the false alarms its
    ARL0 leads one to expect per 30 days at the period's pace."""
    calibration = monitor["calibration"] or {}
    baseline = monitor["baseline"] or {}
    by_name: Mapping[str, object] = monitor
    arl0 = calibration.get("arl0")
    points = monitor["points_in_period"]
    return {
        **{name: by_name.get(name) for name in MONITOR_FIELDS},
        "arl0": arl0,
        "arl0_se": calibration.get("arl0_se"),
        "arl1_r2": calibration.get("arl1_r2"),
        "arl1_r3": calibration.get("arl1_r3"),
        "baseline_decisions": baseline.get("decisions"),
        "fit_method": (baseline.get("fit") or {}).get("method"),
        "sprt": monitor["sprt"],
        "status_at_period_end": monitor["status_at_period_end"],
        "points_in_period": points,
        "alarms_in_period": monitor["alarms_in_period"],
        "expected_false_alarms_per_30_days": (
            round(30 * points / days / arl0, 2) if arl0 and days > 0 else None
        ),
    }


def alarm_row(alarm: AlarmRow, *, start: dt.datetime, end: dt.datetime) -> JSONObject:
    """An alarm as it stood at the period's end: an acknowledgement after the end is not shown,
    so the same report can be made again later."""
    acknowledged_at = alarm["acknowledged_at"]
    by_name: Mapping[str, object] = alarm
    if acknowledged_at is not None and acknowledged_at >= end:
        acknowledged_at = None  # acknowledged after the period
    known = acknowledged_at is not None
    raised_at = alarm["raised_at"]
    in_period = start <= raised_at < end or (acknowledged_at is not None and start <= acknowledged_at)
    return {
        **{name: by_name.get(name) for name in ALARM_FIELDS},
        "raised_at": isoformat(raised_at),
        "status": "acknowledged" if known else "open",
        "acknowledged_at": isoformat(acknowledged_at) if known else None,
        "acknowledged_by": alarm["acknowledged_by"] if known else None,
        "disposition": alarm["disposition"] if known else None,
        "note": alarm["note"] if known else None,
        "hours_to_acknowledge": round((acknowledged_at - raised_at).total_seconds() / 3600, 1)
        if acknowledged_at is not None
        else None,
        "in_period": bool(in_period),
    }


def _alarms_of_period(
    alarms: list[AlarmRow], *, start: dt.datetime, end: dt.datetime
) -> tuple[list[JSONObject], list[JSONObject]]:
    """The alarms the report lists (in the period, or open at its end), newest first, and those
    raised in the period."""
    before_end = sorted(
        (a for a in alarms if a["raised_at"] < end),
        key=lambda a: (a["raised_at"], a["alarm_id"]),
        reverse=True,
    )
    listed: list[JSONObject] = []
    raised: list[JSONObject] = []
    for alarm in before_end:
        row = alarm_row(alarm, start=start, end=end)
        if row["in_period"] or row["status"] == "open":
            listed.append(row)
        if alarm["raised_at"] >= start:
            raised.append(row)
    return listed, raised


def _totals(monitors: list[JSONObject], alarms: list[JSONObject], raised: list[JSONObject]) -> JSONObject:
    return {
        "monitors": len(monitors),
        "alarms_raised": len(raised),
        "alarms_open_at_period_end": sum(1 for a in alarms if a["status"] == "open"),
        "by_severity": {s: sum(1 for a in raised if a["severity"] == s) for s in SEVERITIES},
        "by_disposition": {
            d: sum(1 for a in alarms if a["in_period"] and a["disposition"] == d) for d in DISPOSITIONS
        },
    }


def section(
    rows: ReportRows, *, start: dt.datetime, end: dt.datetime, template: str, per_person: bool
) -> JSONObject:
    """The `drift_monitoring` member from `rows` (`monitors`, `alarms` raised before the period's
    end, `sprt_conclusions`). Without the per-person permission the `user` monitors, their alarms
    and the SPRT rows are left out and `reviewers_withheld` says so; the totals count them all."""
    days = (end - start).total_seconds() / 86400
    monitors = [monitor_row(m, days=days) for m in rows["monitors"]]
    alarms, raised = _alarms_of_period(rows["alarms"], start=start, end=end)
    out: JSONObject = {
        "evidences": citations.point("drift_monitoring", template),
        "statement": STATEMENT,
        "monitors": monitors,
        "alarms": alarms,
        "sprt_conclusions": list(rows["sprt_conclusions"]),
        "totals": _totals(monitors, alarms, raised),
    }
    if not per_person:
        reviewer_monitors = {m["monitor_id"] for m in monitors if m["scope"] == "user"}
        out["monitors"] = [m for m in monitors if m["scope"] != "user"]
        out["alarms"] = [a for a in alarms if a["monitor_id"] not in reviewer_monitors]
        out["sprt_conclusions"] = []
        out["reviewers_withheld"] = citations.withheld(template)
    return out


def unacknowledged(rows: ReportRows, *, end: dt.datetime) -> list[str]:
    """The ids of the alarms raised before the period's end and not acknowledged by it, oldest
    first: each holds the EU AI Act report at NEEDS_REVIEW (docs/reference/reports.md,
    "Compliance status (this report only)")."""
    open_ = [
        a
        for a in rows["alarms"]
        if a["raised_at"] < end and ((ack := a["acknowledged_at"]) is None or ack >= end)
    ]
    return [a["alarm_id"] for a in sorted(open_, key=lambda a: (a["raised_at"], a["alarm_id"]))]


def recommendations(drift: JSONObject) -> list[JSONObject]:
    """One item per alarm of the period still open at its end, and one per alarm acknowledged
    `use_suspended` (the deployer suspended the system's use: its return needs evidence)."""
    recs = []
    for alarm in drift["alarms"]:
        if alarm["in_period"] and alarm["status"] == "open":
            who = f"reviewer {alarm['user_id']}" if alarm.get("user_id") else "the organisation"
            recs.append(
                {
                    "priority": "high" if alarm["severity"] == "high" else "medium",
                    "figure": "drift_alarm",
                    "value": alarm["alarm_id"],
                    "threshold": None,
                    "text": (
                        f"Triage the open {alarm['chart'].replace('_', '-')} drift alarm {alarm['alarm_id']} of {who} "
                        f"(severity {alarm['severity']}, excess {alarm['excess']:.2f} expected extra "
                        "wrong decisions): read its run, look for a cause, act, and acknowledge it with a "
                        "disposition."
                    ),
                }
            )
        if alarm["disposition"] == "use_suspended":
            recs.append(
                {
                    "priority": "high",
                    "figure": "drift_alarm.disposition",
                    "value": "use_suspended",
                    "threshold": None,
                    "text": (
                        f"Use of the system was suspended after drift alarm {alarm['alarm_id']}: keep the evidence "
                        "of what was corrected before it is used again."
                    ),
                }
            )
    return recs
