"""A monitor's baseline completed (docs/reference/drift.md, Baseline and follow model): the
follow model fitted for a reliance chart, the status that follows, and its entry."""

import datetime as dt
from collections.abc import Sequence

from config.jsondoc import JSONObject
from config.timeutils import isoformat
from drift import trail
from drift.charts import RELIANCE_CHARTS, UNDER_RELIANCE, fit_follow_model, in_control_probability
from drift.models import DriftMonitor
from drift.wire import MonitorFields, fit_of


def baseline_complete(
    monitor: MonitorFields,
    baseline: JSONObject,
    points: Sequence[tuple[float | None, int, int]],
    *,
    at: dt.datetime,
) -> tuple[trail.Record, str]:
    """`baseline`: the monitor's baseline members, completed in place; `points`: the baseline's
    (c, e, sequence) in chain order. Returns the entry's record and the status that follows
    (`live` with an h, else `calibrating`)."""
    fit = None
    if monitor.chart in RELIANCE_CHARTS:
        flip = monitor.chart == UNDER_RELIANCE
        fit = fit_follow_model([(c, 1 - e if flip else e) for c, e, _ in points if c is not None]).as_dict()
    baseline.update(
        collected=len(points),
        first_sequence=points[0][2],
        last_sequence=points[-1][2],
        completed_at=isoformat(at),
        fit=fit,
    )
    status = DriftMonitor.Status.LIVE if monitor.h is not None else DriftMonitor.Status.CALIBRATING
    data = {
        "monitor_id": monitor.pk,
        "chart": monitor.chart,
        "user_id": monitor.user_id,
        "model_id": monitor.model_id,
        "baseline": {
            "mode": baseline["mode"],
            "decisions": baseline["decisions"],
            "first_sequence": baseline["first_sequence"],
            "last_sequence": baseline["last_sequence"],
            "fit": fit,
        },
        "status": status,
    }
    return trail.Record(trail.BASELINE_COMPLETED, monitor.pk, data, user_id=monitor.user_id), status


def case_mix(monitor: DriftMonitor, confidences: Sequence[float]) -> list[float]:
    """The in-control probabilities P of the baseline points (the calibration's case mix)."""
    fit = fit_of(monitor)
    return [in_control_probability(monitor.chart, c, fit) for c in confidences]
