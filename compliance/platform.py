"""Figures over every customer's export jobs: the platform's own figures (/metrics and
/engines/status for an admin key, the staff console). Nothing here is shown to a customer's
key; a customer's own figures come from compliance.selectors, which always take the customer."""

import datetime as dt
from collections.abc import Collection

from django.db.models import Max

from compliance.models import ExportJob
from config.counts import counts_by


def platform_export_list_recent(
    *, limit: int = 5, customer_ids: Collection[str] | None = None
) -> list[ExportJob]:
    """The latest exports of every customer, or of `customer_ids` when given (the staff console)."""
    qs = ExportJob.objects.select_related("customer")
    if customer_ids is not None:
        qs = qs.filter(customer_id__in=customer_ids)
    return list(qs.order_by("-created_at", "-id")[:limit])


def platform_export_status_counts() -> dict[str, int]:
    return counts_by(ExportJob.objects.all(), "status", ExportJob.Status.values)


def platform_export_failed_since(*, since: dt.datetime) -> int:
    return ExportJob.objects.filter(status=ExportJob.Status.FAILED, completed_at__gte=since).count()


def platform_export_last_completed_at() -> dt.datetime | None:
    return ExportJob.objects.filter(status=ExportJob.Status.COMPLETED).aggregate(last=Max("completed_at"))[
        "last"
    ]
