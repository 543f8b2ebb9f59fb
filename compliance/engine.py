"""The `report_generation` engine of /engines/status and the export counts of /metrics (docs/reference/system.md).
An admin key sees the platform's jobs; any other key sees its own customer's."""

import datetime as dt

from django.conf import settings
from django.utils import timezone

from compliance import platform, selectors
from config.heartbeat import workers_online
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from keys.models import Customer


def _figures(counts: dict[str, int], failed: int, last_completed_at: dt.datetime | None) -> JSONObject:
    return {
        "queued_exports": counts["queued"],
        "processing_exports": counts["processing"],
        "failed_exports_24h": failed,
        "last_completed_at": isoformat(last_completed_at),
    }


def engines() -> list[JSONObject]:
    online = workers_online()
    figures = _figures(
        platform.platform_export_status_counts(),
        platform.platform_export_failed_since(since=timezone.now() - dt.timedelta(hours=24)),
        platform.platform_export_last_completed_at(),
    )
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


def customer_engines(customer: Customer) -> dict[str, JSONObject]:
    figures = _figures(
        selectors.export_status_counts(customer=customer),
        selectors.export_failed_since(since=timezone.now() - dt.timedelta(hours=24), customer=customer),
        selectors.export_last_completed_at(customer=customer),
    )
    return {"report_generation": figures}


def metrics() -> JSONObject:
    counts = platform.platform_export_status_counts()
    return {"exports": counts, "queues": {"exports_queued": counts["queued"]}}


def customer_metrics(customer: Customer) -> JSONObject:
    return {"exports": selectors.export_status_counts(customer=customer)}
