"""Thin Celery tasks of the drift monitors: they take ids and call one service; running one
twice is harmless (the claim on the monitor row is exclusive, and the entry is appended once)."""

from celery import shared_task

from drift import calibrating


@shared_task(name="drift.tasks.monitor_calibrate_automatic", ignore_result=True)
def monitor_calibrate_automatic(monitor_id: str) -> None:
    """The write that completes a `next` baseline with arl0_target enqueues this on commit;
    beat sends it again when its worker died or its message was lost."""
    calibrating.monitor_calibrate_automatic(monitor_id=monitor_id)


@shared_task(name="drift.tasks.calibrations_recover", ignore_result=True)
def calibrations_recover() -> int:
    """Beat, every DRIFT_CALIBRATION_RECOVER_SECONDS: calibrating monitors that no worker holds."""
    return calibrating.calibrations_recover()
