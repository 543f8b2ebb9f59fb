"""The `webhook_delivery` engine for /engines/status and delivery figures for /metrics (docs/reference/system.md).

Every figure is an indexed count: pending and due rows come from the partial index on
pending rows, failures in 24 h from (status, completed_at); the per-status totals for
/metrics are cached for a few seconds, so scraping does not rescan the table each time."""

import datetime as dt

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from config.heartbeat import workers_online
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from keys.models import Customer
from webhooks import platform, selectors

METRICS_CACHE_SECONDS = 10


def engines() -> list[JSONObject]:
    now = timezone.now()
    online = workers_online()
    pending = platform.platform_deliveries_pending_count()
    due = platform.platform_deliveries_due_count(now=now)
    failed = platform.platform_deliveries_failed_since(since=now - dt.timedelta(hours=24))
    # From the workers alone: a status that moved with the backlog would tell every customer
    # when another one has deliveries waiting.
    status = "operational" if online else "down"
    return [
        {
            "name": "webhook_delivery",
            "status": status,
            "version": settings.SERVICE_VERSION,
            "last_activity_at": isoformat(platform.platform_last_attempt_at()),
            "pending_deliveries": pending,
            "due_deliveries": due,
            "failed_deliveries_24h": failed,
            "workers_online": online,
        }
    ]


def metrics() -> JSONObject:
    counts = cache.get("trustcal:webhooks:status-counts")
    if counts is None:
        counts = platform.platform_delivery_status_counts()
        cache.set("trustcal:webhooks:status-counts", counts, METRICS_CACHE_SECONDS)
    return {
        "deliveries": counts,
        "queues": {"webhook_deliveries_due": platform.platform_deliveries_due_count()},
        "delivery_internal_errors": platform.platform_internal_error_total(),
    }


def platform_metrics() -> JSONObject:
    """Figures about the service itself, shown to every key: the due backlog and bugs of ours
    while sending (never counted as failed attempts)."""
    return {
        "queues": {"webhook_deliveries_due": platform.platform_deliveries_due_count()},
        "delivery_internal_errors": platform.platform_internal_error_total(),
    }


def customer_metrics(customer: Customer) -> JSONObject:
    """The caller's own deliveries by status, for a non-admin key (cached a few seconds)."""
    key = f"trustcal:webhooks:status-counts:{customer.pk}"
    counts = cache.get(key)
    if counts is None:
        counts = selectors.delivery_status_counts(customer=customer)
        cache.set(key, counts, METRICS_CACHE_SECONDS)
    return {"deliveries": counts}


def customer_engines(customer: Customer) -> dict[str, JSONObject]:
    """The caller's own delivery figures inside the `webhook_delivery` engine (non-admin keys)."""
    now = timezone.now()
    return {
        "webhook_delivery": {
            "pending_deliveries": selectors.deliveries_pending_count(customer=customer),
            "failed_deliveries_24h": selectors.deliveries_failed_since(
                since=now - dt.timedelta(hours=24), customer=customer
            ),
        }
    }
