"""Thin Celery tasks for exports: they take ids and call one service; running one twice is
harmless (the claim on the job row is exclusive)."""

from celery import shared_task
from django.conf import settings

from compliance import services


# A backstop past the render's own time limit (compliance.render_limits.render_limits, which
# fails the job with its reason): a render stuck in native code is killed with its process,
# and its job is recovered like any job whose worker died.
@shared_task(
    name="compliance.tasks.export_render",
    ignore_result=True,
    time_limit=settings.EXPORT_RENDER_SECONDS + 60 if settings.EXPORT_RENDER_SECONDS > 0 else None,
)
def export_render(export_id: str) -> None:
    """POST /export enqueues this on commit; the recovery task enqueues it again if needed."""
    services.export_run(export_id=export_id)


@shared_task(name="compliance.tasks.exports_recover", ignore_result=True)
def exports_recover() -> int:
    """Every 30 s (beat): jobs whose worker died or whose message was lost."""
    return services.exports_recover()


@shared_task(name="compliance.tasks.exports_expire", ignore_result=True)
def exports_expire() -> int:
    """Hourly (beat): exports past their retention period."""
    return services.exports_expire()
