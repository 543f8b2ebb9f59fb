"""Periodic calibration work (beat: every 60 s)."""

from celery import shared_task

from calibration import services


@shared_task(name="calibration.tasks.thresholds_check")
def thresholds_check() -> dict[str, int]:
    """Check every active staff-defined threshold (threshold.breached) and refresh the risk
    users of customers active today (risk_user.identified). Safe to run twice: each
    threshold's breached state and each user's risk state are locked rows."""
    return services.thresholds_check_all()
