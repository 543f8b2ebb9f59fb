"""Thin Celery tasks: they take ids and call one service; running one twice is harmless
(a claim is exclusive, and a row that is not due is not claimed)."""

from celery import shared_task
from celery.signals import worker_process_shutdown

from webhooks import services


@shared_task(name="webhooks.tasks.deliveries_start", ignore_result=True)
def deliveries_start(delivery_ids: list[str]) -> int:
    """Enqueued on commit by event_emit: the first attempt, at once."""
    return services.deliveries_start(delivery_ids=delivery_ids)


@shared_task(name="webhooks.tasks.deliveries_dispatch_due", ignore_result=True)
def deliveries_dispatch_due() -> int:
    """Every 2 s (beat): claims due rows (retries, lost messages, expired leases)."""
    return services.deliveries_dispatch_due()


@worker_process_shutdown.connect
def _close_send_pool(**kwargs) -> None:
    services.send_pool_close()
