"""Periodic oversight work (beat: every 5 minutes)."""

from celery import shared_task

from oversight import services


@shared_task(name="oversight.tasks.rubber_stamp_check")
def rubber_stamp_check() -> dict[str, int]:
    """Fire oversight.rubber_stamp for reviewers who became flagged. Safe to run twice: the
    per-reviewer state rows are locked and record what was announced."""
    return services.rubber_stamp_check_all()
