"""What the compliance reports read of the drift monitors (docs/reference/reports.md, Drift
monitoring): the rows of `compliance.drift_report`, and the chart points a PDF draws. Reads
only, each a few grouped queries whatever the number of points."""

import datetime as dt
from typing import Any, Literal, TypedDict

from django.db.models import Count, Max, Q

from audit import selectors as audit_selectors
from config.jsondoc import JSONObject
from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from keys.models import Customer

CHART_POINTS_MAX = 5000  # points a printed chart draws (the period's last ones)


class MonitorRow(TypedDict):
    """A monitor in force in the period (`report_rows`)."""

    monitor_id: str
    name: str
    chart: str
    scope: str
    user_id: str | None
    model_id: str | None
    model_version: str | None
    odds_ratio: float | None
    h: float | None
    h_source: str | None
    arl0_target: int | None
    calibration: JSONObject | None  # the last applied calibration's answer, as stored
    baseline: JSONObject | None  # the baseline's figures, as stored
    sprt: JSONObject | None  # {"p0", "p1", "alpha", "beta"} as given
    status_at_period_end: str
    points_in_period: int
    alarms_in_period: int


class AlarmRow(TypedDict):
    """An alarm raised before the period's end and not acknowledged before its start."""

    alarm_id: str
    monitor_id: str
    chart: str
    user_id: str | None
    model_id: str | None
    raised_at: dt.datetime
    point_index: int
    decision_id: str
    statistic: float
    threshold: float
    excess: float
    severity: str
    signals: int
    acknowledged_at: dt.datetime | None
    acknowledged_by: str | None
    disposition: str | None
    note: str | None


class SprtRow(TypedDict):
    """A `probe_sprt` monitor's conclusions of the period."""

    monitor_id: str
    user_id: str | None
    model_id: str | None
    h0: int
    h1: int
    last_conclusion: Literal["h0", "h1"]
    last_concluded_at: str | None


class ReportRows(TypedDict):
    monitors: list[MonitorRow]
    alarms: list[AlarmRow]
    sprt_conclusions: list[SprtRow]


def _status_at(monitor: DriftMonitor, end: dt.datetime) -> str:
    """The monitor's status at `end`: deleted, collecting its baseline, calibrating, or its
    status now (live, or paused when it was last changed before `end`)."""
    if monitor.deleted_at is not None and monitor.deleted_at < end:
        return "deleted"
    baseline = monitor.baseline or {}
    if baseline and (not baseline.get("completed_at") or baseline["completed_at"] >= _text(end)):
        return "baseline"
    calibration = monitor.calibration or {}
    if monitor.h_source == "calibrated" and calibration.get("calibrated_at", "") >= _text(end):
        return "calibrating"
    if monitor.status == DriftMonitor.Status.PAUSED and monitor.updated_at < end:
        return "paused"
    return "live" if monitor.status != DriftMonitor.Status.CALIBRATING else "calibrating"


def _text(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def monitors_in_force(
    customer: Customer,
    *,
    start: dt.datetime,
    end: dt.datetime,
    model_ids: list[str] | None,
    user_ids: list[str] | None,
) -> list[DriftMonitor]:
    """Monitors created before `end` and not deleted before `start`, oldest first; a model
    filter keeps the monitors of those models, a reviewer filter the `user` monitors of those
    reviewers."""
    rows = DriftMonitor.objects.filter(customer=customer, created_at__lt=end).filter(
        Q(deleted_at__isnull=True) | Q(deleted_at__gte=start)
    )
    if model_ids:
        rows = rows.filter(model_id__in=model_ids)
    if user_ids:
        rows = rows.filter(scope="user", user_id__in=user_ids)
    return list(rows.order_by("configured_sequence"))


def report_rows(
    customer: Customer,
    *,
    start: dt.datetime,
    end: dt.datetime,
    model_ids: list[str] | None = None,
    user_ids: list[str] | None = None,
) -> ReportRows:
    """`monitors`, `alarms` (raised before `end` and not acknowledged before `start`) and
    `sprt_conclusions` of the period [start, end), for `compliance.drift_report.section`."""
    monitors = monitors_in_force(customer, start=start, end=end, model_ids=model_ids, user_ids=user_ids)
    ids = [m.pk for m in monitors]
    first, after = audit_selectors.sequences_appended(customer, since=start, until=end)
    in_period = Q(sequence__gte=first, sequence__lt=after)
    charted = DriftPoint.objects.filter(monitor_id__in=ids, baseline=False, index__isnull=False).filter(
        in_period
    )
    points = dict(charted.values_list("monitor_id").annotate(n=Count("id")))
    alarms = list(
        DriftAlarm.objects.filter(customer=customer, monitor_id__in=ids, raised_at__lt=end)
        .filter(Q(acknowledged_at__isnull=True) | Q(acknowledged_at__gte=start))
        .order_by("raised_at", "id")
    )
    raised: dict[str, int] = {}
    for alarm in alarms:
        if alarm.raised_at >= start:
            raised[alarm.monitor_id] = raised.get(alarm.monitor_id, 0) + 1
    return {
        "monitors": [_monitor_row(m, end, points.get(m.pk, 0), raised.get(m.pk, 0)) for m in monitors],
        "alarms": [_alarm_row(a) for a in alarms],
        "sprt_conclusions": _sprt_rows([m for m in monitors if m.chart == "probe_sprt"], customer, charted),
    }


def _monitor_row(monitor: DriftMonitor, end: dt.datetime, points: int, alarms: int) -> MonitorRow:
    return {
        "monitor_id": monitor.pk,
        "name": monitor.name,
        "chart": monitor.chart,
        "scope": monitor.scope,
        "user_id": monitor.user_id,
        "model_id": monitor.model_id,
        "model_version": monitor.model_version,
        "odds_ratio": monitor.odds_ratio,
        "h": None
        if monitor.h is None
        else (round(monitor.h, 3) if monitor.h_source == "calibrated" else monitor.h),
        "h_source": monitor.h_source,
        "arl0_target": monitor.arl0_target,
        "calibration": monitor.calibration,
        "baseline": monitor.baseline,
        "sprt": monitor.sprt,
        "status_at_period_end": _status_at(monitor, end),
        "points_in_period": points,
        "alarms_in_period": alarms,
    }


def _alarm_row(alarm: DriftAlarm) -> AlarmRow:
    return {
        "alarm_id": alarm.pk,
        "monitor_id": alarm.monitor_id,
        "chart": alarm.chart,
        "user_id": alarm.user_id,
        "model_id": alarm.model_id,
        "raised_at": alarm.raised_at,
        "point_index": alarm.point_index,
        "decision_id": alarm.decision_id,
        "statistic": round(alarm.statistic, 6),
        "threshold": round(alarm.threshold, 6),
        "excess": round(alarm.excess, 4),
        "severity": alarm.severity,
        "signals": alarm.signals,
        "acknowledged_at": alarm.acknowledged_at,
        "acknowledged_by": alarm.acknowledged_by,
        "disposition": alarm.disposition,
        "note": alarm.note,
    }


def _sprt_rows(monitors: list[DriftMonitor], customer: Customer, charted: Any) -> list[SprtRow]:
    """Per `probe_sprt` monitor, its conclusions of the period and the last one with the time its
    entry was appended."""
    if not monitors:
        return []
    concluded = charted.filter(monitor_id__in=[m.pk for m in monitors], conclusion__isnull=False)
    counts = {
        (row["monitor_id"], row["conclusion"]): (row["n"], row["last"])
        for row in concluded.values("monitor_id", "conclusion").annotate(n=Count("id"), last=Max("sequence"))
    }
    out: list[SprtRow] = []
    for monitor in monitors:
        h0, last_h0 = counts.get((monitor.pk, "h0"), (0, None))
        h1, last_h1 = counts.get((monitor.pk, "h1"), (0, None))
        if not h0 and not h1:
            continue
        last_sequence = max(s for s in (last_h0, last_h1) if s is not None)
        out.append(
            {
                "monitor_id": monitor.pk,
                "user_id": monitor.user_id,
                "model_id": monitor.model_id,
                "h0": h0,
                "h1": h1,
                "last_conclusion": "h1" if last_sequence == last_h1 else "h0",
                "last_concluded_at": audit_selectors.entry_logged_at(customer, last_sequence),
            }
        )
    return out


def chart_points(
    customer: Customer, monitor_id: str, *, start: dt.datetime, end: dt.datetime
) -> list[JSONObject]:
    """The chart points of the period (at most the last CHART_POINTS_MAX), ascending, as the
    printed chart draws them."""
    first, after = audit_selectors.sequences_appended(customer, since=start, until=end)
    rows = (
        DriftPoint.objects.filter(
            monitor__customer=customer, monitor_id=monitor_id, baseline=False, index__isnull=False
        )
        .filter(sequence__gte=first, sequence__lt=after)
        .order_by("-index")
        .values("index", "x", "llr_sum", "restart", "signal", "conclusion")[:CHART_POINTS_MAX]
    )
    out = []
    for row in reversed(list(rows)):
        point: JSONObject = {
            "index": row["index"],
            "restart": row["restart"],
            "signal": row["signal"],
            "conclusion": row["conclusion"],
        }
        if row["x"] is not None:
            point["x"] = row["x"]
        else:
            point["llr_sum"] = row["llr_sum"]
        out.append(point)
    return out


def last_points(monitor: DriftMonitor, count: int = 200) -> list[DriftPoint]:
    """The monitor's last `count` chart points, ascending (the console's monitor page)."""
    rows = DriftPoint.objects.filter(monitor=monitor, baseline=False, index__isnull=False).order_by("-index")
    return list(reversed(list(rows[:count])))


def run_points(alarm: DriftAlarm) -> list[DriftPoint]:
    """The points of an alarm's run, from its start to its signal (the console's alarm page)."""
    start = int((alarm.run or {}).get("start_index") or alarm.point_index)
    return list(
        DriftPoint.objects.filter(
            monitor_id=alarm.monitor_id, baseline=False, index__gte=start, index__lte=alarm.point_index
        ).order_by("index")
    )


def reviewer_alarm_count(customer_ids: list[str] | None = None) -> int:
    """Alarms of `user` monitors (what staff without the per-person permission see of them)."""
    rows = DriftAlarm.objects.filter(monitor__scope="user")
    return (rows.filter(customer_id__in=customer_ids) if customer_ids is not None else rows).count()


def open_alarms(customer: Customer) -> list[DriftAlarm]:
    """The customer's open alarms, oldest first."""
    return list(
        DriftAlarm.objects.filter(customer=customer, status=DriftAlarm.Status.OPEN).order_by(
            "raised_at", "id"
        )
    )
