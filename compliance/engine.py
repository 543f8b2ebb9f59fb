"""The `report_generation` engine of /engines/status and the export counts of /metrics (C13).
An admin key sees the platform's jobs; any other key sees its own customer's."""

import datetime as dt
from typing import Any

from django.conf import settings
from django.utils import timezone

from compliance import selectors
from config.heartbeat import workers_online
from config.timeutils import isoformat
from keys.models import Customer


def _figures(customer: Customer | None) -> dict[str, Any]:
    counts = selectors.export_status_counts(customer=customer)
    since = timezone.now() - dt.timedelta(hours=24)
    return {
        "queued_exports": counts["queued"],
        "processing_exports": counts["processing"],
        "failed_exports_24h": selectors.export_failed_since(since=since, customer=customer),
        "last_completed_at": isoformat(selectors.export_last_completed_at(customer=customer)),
    }


def engines() -> list[dict[str, Any]]:
    online = workers_online()
    figures = _figures(None)
    return [
        {
            "name": "report_generation",
            "status": "operational" if online else "down",
            "version": settings.SERVICE_VERSION,
            "last_activity_at": figures["last_completed_at"],
            "workers_online": online,
            **figures,
        }
    ]


def customer_engines(customer: Customer) -> dict[str, dict[str, Any]]:
    return {"report_generation": _figures(customer)}


def metrics() -> dict[str, Any]:
    counts = selectors.export_status_counts()
    return {"exports": counts, "queues": {"exports_queued": counts["queued"]}}


def customer_metrics(customer: Customer) -> dict[str, Any]:
    return {"exports": selectors.export_status_counts(customer=customer)}
