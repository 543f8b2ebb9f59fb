"""Reads of a customer's export jobs: the list and the engine's figures (every customer's figures
are in compliance.platform)."""

import datetime as dt

from django.db.models import Max, QuerySet

from compliance.models import ExportJob
from config.counts import counts_by
from keys.models import Customer


def export_list(rows: QuerySet[ExportJob]) -> QuerySet[ExportJob]:
    """The exports of a tenant-filtered queryset, newest first (the time-sortable id breaks ties)."""
    return rows.order_by("-created_at", "-id")


def export_status_counts(*, customer: Customer) -> dict[str, int]:
    return counts_by(ExportJob.objects.filter(customer=customer), "status", ExportJob.Status.values)


def export_failed_since(*, since: dt.datetime, customer: Customer) -> int:
    return ExportJob.objects.filter(
        customer=customer, status=ExportJob.Status.FAILED, completed_at__gte=since
    ).count()


def export_last_completed_at(*, customer: Customer) -> dt.datetime | None:
    qs = ExportJob.objects.filter(customer=customer, status=ExportJob.Status.COMPLETED)
    return qs.aggregate(last=Max("completed_at"))["last"]
