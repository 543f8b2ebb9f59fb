"""Figures over every customer's deliveries: the platform's own figures (/metrics and
/engines/status for an admin key, the staff console). Nothing here is shown to a customer's
key; a customer's own figures come from webhooks.selectors, which always take the customer."""

import datetime as dt
from collections.abc import Collection

from django.utils import timezone

from config.counts import counts_by
from webhooks import conf
from webhooks.models import Delivery, DeliveryAttempt, DispatchCounter, Webhook


def platform_delivery_status_counts() -> dict[str, int]:
    return counts_by(Delivery.objects.all(), "status", Delivery.Status.values)


def platform_deliveries_pending_count() -> int:
    return Delivery.objects.filter(status=Delivery.Status.PENDING).count()


def platform_deliveries_failed_since(*, since: dt.datetime) -> int:
    return Delivery.objects.filter(status=Delivery.Status.FAILED, completed_at__gte=since).count()


def platform_deliveries_due_count(*, now: dt.datetime | None = None) -> int:
    now = now or timezone.now()
    return Delivery.objects.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=now).count()


def platform_last_attempt_at() -> dt.datetime | None:
    return DeliveryAttempt.objects.order_by("-attempted_at").values_list("attempted_at", flat=True).first()


def platform_internal_error_total() -> int:
    """Deliveries left pending by a bug of the service while sending (never a failed attempt)."""
    return int(
        DispatchCounter.objects.filter(name="internal_errors").values_list("value", flat=True).first() or 0
    )


def platform_webhooks_disabled_by_failures(
    *, limit: int = 10, customer_ids: Collection[str] | None = None
) -> list[Webhook]:
    """Webhooks the delivery worker turned off after repeated failures, latest first (every
    customer's, or those of `customer_ids` when given: the staff console)."""
    qs = Webhook.objects.filter(status=Webhook.Status.DISABLED, disabled_reason=conf.DISABLED_REASON_FAILURES)
    if customer_ids is not None:
        qs = qs.filter(customer_id__in=customer_ids)
    return list(qs.select_related("customer").order_by("-disabled_at", "-id")[:limit])
