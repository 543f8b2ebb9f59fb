"""The monitor, alarm and series point as served (docs/reference/drift.md, The API)."""

from typing import Any

from config.jsondoc import JSONObject
from config.timeutils import isoformat
from drift.charts import PROBE_SPRT
from drift.models import DriftAlarm, DriftMonitor
from drift.wire import sprt_json


def _time(value: Any) -> str | None:  # Any: a datetime or None
    return None if value is None else isoformat(value)


# JSON values
def alarm_snapshot(monitor: DriftMonitor) -> JSONObject:
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
    state = monitor.state or {}
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
            "points": state.get("points", 0),
            "statistic": round(state.get("statistic", 0.0), 6),
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


def _r6(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# Any: a point's columns by name (drift.selectors.series), JSON values
def point_json(point: dict[str, Any], chart: str) -> dict[str, Any]:
    common = {
        "index": point["index"],
        "sequence": point["sequence"],
        "decision_id": point["decision_id"],
        "user_id": point["user_id"],
        "timestamp": isoformat(point["timestamp"]),
    }
    if chart == PROBE_SPRT:
        return common | {
            "event": point["event"],
            "llr": _r6(point["llr"]),
            "llr_sum": _r6(point["llr_sum"]),
            "restart": point["restart"],
            "conclusion": point["conclusion"],
            "alarm_id": point["alarm_id"],
        }
    return common | {
        "ai_confidence": point["ai_confidence"],
        "event": point["event"],
        "p": _r6(point["p"]),
        "w": _r6(point["w"]),
        "x": _r6(point["x"]),
        "restart": point["restart"],
        "signal": point["signal"],
        "alarm_id": point["alarm_id"],
    }
