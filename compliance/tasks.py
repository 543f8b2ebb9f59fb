"""Thin Celery tasks for exports: they take ids and call one service; running one twice is
harmless (the claim on the job row is exclusive)."""

from celery import shared_task

from compliance import services


@shared_task(name="compliance.tasks.export_render", ignore_result=True)
def export_render(export_id: str) -> None:
    """POST /export enqueues this on commit; the recovery task enqueues it again if needed."""
    services.export_run(export_id=export_id)


@shared_task(name="compliance.tasks.exports_recover", ignore_result=True)
def exports_recover() -> int:
    """Every 30 s (beat): jobs whose worker died or whose message was lost."""
    return services.exports_recover()
