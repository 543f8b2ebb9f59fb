"""Reads for webhooks and their delivery history."""

import datetime as dt
import threading
import time
from dataclasses import dataclass

from django.db.models import Count, Prefetch, QuerySet
from django.utils import timezone

from config.querysets import narrowed
from keys.models import Customer
from webhooks import conf
from webhooks.models import Delivery, DeliveryAttempt, DispatchCounter, Event, Webhook


def webhook_list(*, customer: Customer) -> QuerySet[Webhook]:
    return Webhook.objects.filter(customer=customer).order_by("-created_at", "-id")


def delivery_list(
    *, webhook: Webhook, status: str | None = None, event_type: str | None = None
) -> QuerySet[Delivery]:
    qs = narrowed(Delivery.objects.filter(webhook=webhook), status=status, event_type=event_type)
    attempts = DeliveryAttempt.objects.order_by("attempt", "id")
    return qs.order_by("-created_at", "-id").prefetch_related(Prefetch("attempts", queryset=attempts))


def _of(customer: Customer | None) -> QuerySet[Delivery]:
    rows = Delivery.objects.all()
    return rows if customer is None else rows.filter(webhook__customer=customer)


def delivery_status_counts(*, customer: Customer | None = None) -> dict[str, int]:
    counts = dict.fromkeys(Delivery.Status.values, 0)
    for row in _of(customer).order_by().values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    return counts


def deliveries_due_count(*, now: dt.datetime | None = None) -> int:
    now = now or timezone.now()
    return Delivery.objects.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=now).count()


def deliveries_pending_count(*, customer: Customer | None = None) -> int:
    return _of(customer).filter(status=Delivery.Status.PENDING).count()


def deliveries_failed_since(*, since: dt.datetime, customer: Customer | None = None) -> int:
    return _of(customer).filter(status=Delivery.Status.FAILED, completed_at__gte=since).count()


def last_attempt_at() -> dt.datetime | None:
    return DeliveryAttempt.objects.order_by("-attempted_at").values_list("attempted_at", flat=True).first()


def internal_error_total() -> int:
    return int(
        DispatchCounter.objects.filter(name="internal_errors").values_list("value", flat=True).first() or 0
    )


@dataclass(frozen=True)
class TestResult:
    """C9's test answer; `success` (and the attempt's figures) are null while it is pending."""

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


def webhooks_disabled_by_failures(*, limit: int = 10) -> list[Webhook]:
    """Webhooks the delivery worker turned off after repeated failures, latest first (all customers)."""
    return list(
        Webhook.objects.filter(status=Webhook.Status.DISABLED, disabled_reason=conf.DISABLED_REASON_FAILURES)
        .select_related("customer")
        .order_by("-disabled_at", "-id")[:limit]
    )
