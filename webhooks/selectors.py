"""Reads for webhooks and their delivery history."""

import datetime as dt

from django.db.models import Count, Prefetch, QuerySet
from django.utils import timezone

from keys.models import Customer
from webhooks.models import Delivery, DeliveryAttempt, Webhook


def webhook_list(*, customer: Customer) -> QuerySet[Webhook]:
    return Webhook.objects.filter(customer=customer).order_by("-created_at", "-id")


def delivery_list(
    *, webhook: Webhook, status: str | None = None, event_type: str | None = None
) -> QuerySet[Delivery]:
    qs = Delivery.objects.filter(webhook=webhook)
    if status:
        qs = qs.filter(status=status)
    if event_type:
        qs = qs.filter(event_type=event_type)
    attempts = DeliveryAttempt.objects.order_by("attempt", "id")
    return qs.order_by("-created_at", "-id").prefetch_related(Prefetch("attempts", queryset=attempts))


def delivery_status_counts() -> dict[str, int]:
    counts = dict.fromkeys(Delivery.Status.values, 0)
    for row in Delivery.objects.order_by().values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    return counts


def deliveries_due_count(*, now: dt.datetime | None = None) -> int:
    now = now or timezone.now()
    return Delivery.objects.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=now).count()


def deliveries_pending_count() -> int:
    return Delivery.objects.filter(status=Delivery.Status.PENDING).count()


def deliveries_failed_since(*, since: dt.datetime) -> int:
    return Delivery.objects.filter(status=Delivery.Status.FAILED, completed_at__gte=since).count()


def last_attempt_at() -> dt.datetime | None:
    return DeliveryAttempt.objects.order_by("-attempted_at").values_list("attempted_at", flat=True).first()
