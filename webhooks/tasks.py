"""Thin Celery tasks: they take ids and call one service; running one twice is harmless
(a claim is exclusive, and a row that is not due is not claimed)."""

from celery import Task, shared_task
from celery.signals import worker_process_shutdown

from webhooks import dispatch, pools, services

# On a worker the dispatch runs in the background (sender threads of the worker process), so
# the task returns at once and the process is free for the next start task; run eagerly (in
# the caller's process) it waits for its holders.


@shared_task(name="webhooks.tasks.deliveries_start", ignore_result=True, bind=True)
def deliveries_start(
    self: Task, delivery_ids: list[str], webhook_ids: list[str] | None = None, customer_id: str | None = None
) -> int:
    """Enqueued on commit by event_emit: the first attempt, at once (`webhook_ids`,
    `customer_id`: the deliveries' webhooks and their customer, when the sender knows them)."""
    return dispatch.deliveries_start(
        delivery_ids=delivery_ids,
        webhook_ids=webhook_ids,
        customer_id=customer_id,
        background=not self.request.is_eager,
    )


@shared_task(name="webhooks.tasks.deliveries_dispatch_due", ignore_result=True, bind=True)
def deliveries_dispatch_due(self: Task) -> int:
    """Every 2 s (beat): claims due rows (retries, lost messages, expired leases)."""
    return dispatch.deliveries_dispatch_due(background=not self.request.is_eager)


@shared_task(name="webhooks.tasks.deliveries_continue", ignore_result=True, bind=True)
def deliveries_continue(self: Task, webhook_ids: list[str]) -> int:
    """Queued by a dispatch whose time budget ended while these webhooks' rows were due."""
    return dispatch.deliveries_dispatch_due(webhook_ids=webhook_ids, background=not self.request.is_eager)


@shared_task(name="webhooks.tasks.webhook_test_send", ignore_result=True, bind=True)
def webhook_test_send(self: Task, delivery_id: str) -> None:
    """POST /webhooks/:id/test: the attempt runs on a worker, never on a web thread, and on
    the worker in a small pool of its own, so test sends to receivers that never answer hold
    neither a worker process nor the dispatcher's senders (a lost one is closed after
    timeout + 60 s by the next test of that webhook)."""
    if self.request.is_eager:
        services.webhook_test_run(delivery_id=delivery_id)
    else:
        pools.test_pool().submit(pools.in_thread, services.webhook_test_run, delivery_id=delivery_id)


@worker_process_shutdown.connect
def _close_send_pool(**kwargs: object) -> None:
    pools.send_pool_close()
