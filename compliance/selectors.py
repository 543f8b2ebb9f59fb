"""Reads of export jobs: the customer's list, the latest ones, and the engine's figures."""

import datetime as dt

from django.db.models import Count, Max, QuerySet

from compliance.models import ExportJob
from keys.models import Customer


def export_list(*, customer: Customer) -> QuerySet[ExportJob]:
    """The customer's exports, newest first (the id is time-sortable and breaks ties)."""
    return ExportJob.objects.filter(customer=customer).order_by("-created_at", "-id")


def export_list_recent(*, limit: int = 5, customer: Customer | None = None) -> list[ExportJob]:
    """The latest exports (all customers' for the staff console when `customer` is None)."""
    qs = ExportJob.objects.select_related("customer").order_by("-created_at", "-id")
    if customer is not None:
        qs = qs.filter(customer=customer)
    return list(qs[:limit])


def export_status_counts(*, customer: Customer | None = None) -> dict[str, int]:
    qs = ExportJob.objects.all() if customer is None else ExportJob.objects.filter(customer=customer)
    rows = qs.order_by().values("status").annotate(n=Count("id"))
    counts = dict.fromkeys(ExportJob.Status.values, 0)
    counts.update({row["status"]: row["n"] for row in rows})
    return counts


def export_failed_since(*, since: dt.datetime, customer: Customer | None = None) -> int:
    qs = ExportJob.objects.filter(status=ExportJob.Status.FAILED, completed_at__gte=since)
    if customer is not None:
        qs = qs.filter(customer=customer)
    return qs.count()


def export_last_completed_at(*, customer: Customer | None = None) -> dt.datetime | None:
    qs = ExportJob.objects.filter(status=ExportJob.Status.COMPLETED)
    if customer is not None:
        qs = qs.filter(customer=customer)
    return qs.aggregate(last=Max("completed_at"))["last"]
