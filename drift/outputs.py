"""The monitor, alarm and series point as served (docs/reference/drift.md, The API)."""

import datetime as dt
from typing import Any

from config.jsondoc import JSONObject
from config.timeutils import isoformat
from drift.charts import PROBE_SPRT
from drift.models import DriftAlarm, DriftMonitor
from drift.wire import MonitorFields, sprt_json


def _time(value: Any) -> str | None:  # Any: a datetime or None
    return None if value is None else isoformat(value)


# JSON values
def alarm_snapshot(monitor: MonitorFields) -> JSONObject:
    return {
        "name": monitor.name,
        "chart": monitor.chart,
        "scope": monitor.scope,
        "user_id": monitor.user_id,
        "model_id": monitor.model_id,
        "model_version": monitor.model_version,
        "odds_ratio": monitor.odds_ratio,
        "h": monitor.h,
    }


# JSON values
def monitor_json(monitor: DriftMonitor) -> JSONObject:
    sprt = monitor.chart == PROBE_SPRT
    return {
        "monitor_id": monitor.pk,
        "name": monitor.name,
        "chart": monitor.chart,
        "scope": monitor.scope,
        "user_id": monitor.user_id,
        "model_id": monitor.model_id,
        "model_version": monitor.model_version,
        "odds_ratio": monitor.odds_ratio,
        "h": monitor.h,
        "h_source": monitor.h_source,
        "arl0_target": monitor.arl0_target,
        "seed": monitor.seed,
        "runs": monitor.runs,
        "baseline": monitor.baseline,
        "sprt": sprt_json(monitor),
        "calibration": monitor.calibration,
        "status": monitor.status,
        "enabled": monitor.enabled,
        "state": {
            "points": monitor.chart_points,
            "statistic": round(monitor.chart_statistic, 6),
            "last_sequence": monitor.last_sequence,
            "open_alarm_id": monitor.open_alarm_id,
            "alarms_raised": monitor.alarms_raised,
            "conclusions_h0": (monitor.conclusions_h0 or 0) if sprt else None,
            "conclusions_h1": (monitor.conclusions_h1 or 0) if sprt else None,
        },
        "configured_sequence": monitor.configured_sequence,
        "created_at": isoformat(monitor.created_at),
        "updated_at": isoformat(monitor.updated_at),
    }


# JSON values
def alarm_json(alarm: DriftAlarm) -> JSONObject:
    sprt = alarm.chart == PROBE_SPRT
    return {
        "alarm_id": alarm.pk,
        "monitor_id": alarm.monitor_id,
        "monitor": alarm.monitor_snapshot,
        "chart": alarm.chart,
        "user_id": alarm.user_id,
        "model_id": alarm.model_id,
        "status": alarm.status,
        "point_index": alarm.point_index,
        "decision_id": alarm.decision_id,
        "decision_sequence": alarm.decision_sequence,
        "statistic": round(alarm.statistic, 6),
        "threshold": round(alarm.threshold, 6) if sprt else alarm.threshold,
        "run": alarm.run,
        "excess": round(alarm.excess, 4),
        "severity": alarm.severity,
        "signals": alarm.signals,
        "last_signal_index": alarm.last_signal_index,
        "last_signal_sequence": alarm.last_signal_sequence,
        "raised_at": isoformat(alarm.raised_at),
        "entry_sequence": alarm.entry_sequence,
        "acknowledged_at": _time(alarm.acknowledged_at),
        "acknowledged_by": alarm.acknowledged_by,
        "disposition": alarm.disposition,
        "note": alarm.note,
        "acknowledgement_entry_sequence": alarm.acknowledgement_entry_sequence,
    }


def _utc_ms(value: dt.datetime) -> str:
    """config.timeutils.isoformat of an aware time, by datetime.isoformat (C) rather than
    strftime: a series page formats up to 5,000 (years 1000-9999 give the same text)."""
    return value.astimezone(dt.UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


# Any: a point's columns (drift.selectors.SERIES_COLUMNS), JSON values
def point_json(row: tuple[Any, ...], chart: str) -> dict[str, Any]:
    """A series point as served; numbers rounded to 6 places (a chart point's p, w, x and
    llr, llr_sum are never null)."""
    (index, sequence, decision_id, user_id, timestamp, ai_confidence, event, p, w, x, llr, llr_sum, restart,
     signal, conclusion, alarm_id) = row  # fmt: skip
    common = {
        "index": index,
        "sequence": sequence,
        "decision_id": decision_id,
        "user_id": user_id,
        "timestamp": _utc_ms(timestamp),
    }
    if chart == PROBE_SPRT:
        return common | {
            "event": event,
            "llr": round(llr, 6),
            "llr_sum": round(llr_sum, 6),
            "restart": restart,
            "conclusion": conclusion,
            "alarm_id": alarm_id,
        }
    return common | {
        "ai_confidence": ai_confidence,
        "event": event,
        "p": round(p, 6),
        "w": round(w, 6),
        "x": round(x, 6),
        "restart": restart,
        "signal": signal,
        "alarm_id": alarm_id,
    }
