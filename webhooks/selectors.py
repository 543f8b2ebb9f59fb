"""Reads for webhooks and their delivery history."""

import datetime as dt
import threading
import time
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from config.counts import counts_by
from keys.models import Customer
from webhooks import conf
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook


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
