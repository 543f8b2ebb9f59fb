"""Reads for webhooks and their delivery history."""

import datetime as dt
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection
from django.db.models import Prefetch, QuerySet

from config.counts import counts_by
from config.db import prepared
from keys.models import Customer
from webhooks import conf
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook

# In the model's field order, the order Model.from_db takes the values of some fields in.
_HOOK_FIELDS = [f.attname for f in Webhook._meta.concrete_fields if f.attname in ("id", "status", "events")]
_HOOKS_SQL = f"SELECT {', '.join(_HOOK_FIELDS)} FROM {Webhook._meta.db_table} WHERE customer_id = %s"  # noqa: S608


def hooks_for_fan_out_sent(customer_id: str) -> Callable[[], list[Webhook]]:
    """The customer's webhooks with what the fan-out reads (id, status, events), in two steps:
    on PostgreSQL one prepared statement (config.db.prepared) is sent now, in the caller's
    pipeline if any, where a read would wait for the server, and the returned function reads its
    rows once the pipeline is left. Through the ORM the same query was compiled again for every
    POST /log that fires an event: 321-365 us of CPU per call against 63-88 us prepared (2,000
    calls each, alternately, in one transaction, load 8.6)."""
    if connection.vendor != "postgresql":
        hooks = list(Webhook.objects.filter(customer_id=customer_id).only(*_HOOK_FIELDS))
        return lambda: hooks
    bound = prepared.cursor()
    bound.execute(_HOOKS_SQL, [customer_id])

    def read() -> list[Webhook]:
        try:
            return _hooks(bound.fetchall())
        finally:
            bound.close()

    return read


def _hooks(rows: list[tuple[object, ...]]) -> list[Webhook]:
    """The customer's webhooks from their rows (_HOOK_FIELDS, values as the driver reads them)."""
    at = _HOOK_FIELDS.index("events")
    hooks = []
    for row in rows:
        values = list(row)
        events = values[at]
        if isinstance(events, str | bytes):  # jsonb may come as text
            values[at] = json.loads(events)
        hooks.append(Webhook.from_db(connection.alias, _HOOK_FIELDS, values))
    return hooks


def delivery_list(*, webhook: Webhook) -> QuerySet[Delivery]:
    """The webhook's deliveries, newest first, with their attempts."""
    qs = Delivery.objects.filter(webhook=webhook)
    attempts = DeliveryAttempt.objects.order_by("attempt", "id")
    return qs.order_by("-created_at", "-id").prefetch_related(Prefetch("attempts", queryset=attempts))


def _of(customer: Customer) -> QuerySet[Delivery]:
    return Delivery.objects.filter(webhook__customer=customer)


def delivery_status_counts(*, customer: Customer) -> dict[str, int]:
    return counts_by(_of(customer), "status", Delivery.Status.values)


def deliveries_pending_count(*, customer: Customer) -> int:
    return _of(customer).filter(status=Delivery.Status.PENDING).count()


def deliveries_failed_since(*, since: dt.datetime, customer: Customer) -> int:
    return _of(customer).filter(status=Delivery.Status.FAILED, completed_at__gte=since).count()


@dataclass(frozen=True)
class TestResult:
    """The test send's answer (docs/reference/webhooks.md, "Test sends"); `success` (and the attempt's figures) are null while it is pending."""

    delivery: Delivery
    event: Event
    success: bool | None
    response_status: int | None
    duration_ms: int | None
    error: str | None


def webhook_test_result(*, delivery_id: str) -> TestResult:
    delivery = Delivery.objects.select_related("event").get(pk=delivery_id)
    if delivery.status == Delivery.Status.PENDING:
        return TestResult(delivery, delivery.event, None, None, None, None)
    attempt = delivery.attempts.order_by("attempt").first()
    if attempt is None:  # closed without an attempt: no worker picked it up in time
        return TestResult(delivery, delivery.event, False, None, 0, "not_sent: no worker picked the test up")
    return TestResult(
        delivery,
        delivery.event,
        delivery.status == Delivery.Status.SUCCEEDED,
        attempt.response_status,
        attempt.duration_ms,
        attempt.error,
    )


# Web threads that may wait for a test's outcome at the same time, per process: the others
# answer at once with the pending delivery, so tests can never occupy the web server.
_test_waiters = threading.BoundedSemaphore(2)


def webhook_test_wait(*, delivery_id: str) -> TestResult:
    """The test's outcome, waiting up to WEBHOOK_TEST_WAIT_SECONDS for the worker."""
    result = webhook_test_result(delivery_id=delivery_id)
    if result.success is not None or not _test_waiters.acquire(blocking=False):
        return result
    try:
        deadline = time.monotonic() + conf.test_wait_seconds()
        while result.success is None and time.monotonic() < deadline:
            time.sleep(0.05)
            result = webhook_test_result(delivery_id=delivery_id)
    finally:
        _test_waiters.release()
    return result
