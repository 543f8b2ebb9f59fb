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


def eu_compliance_status(*, customer: Customer, first_day: dt.date, last_day: dt.date) -> str:
    """The status an EU AI Act report of these whole UTC days (no filters) would state, by the
    rule (docs/reference/reports.md) without rendering it (a few grouped counts)."""
    from compliance.evidence import Scope
    from compliance.report import log_report_build

    start = dt.datetime.combine(first_day, dt.time(), tzinfo=dt.UTC)
    end = dt.datetime.combine(last_day + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    scope = Scope(
        customer=customer,
        start=start,
        end=end,
        time_period={"from": first_day.isoformat(), "to": last_day.isoformat()},
    )
    return str(log_report_build(scope=scope, template="eu_ai_act").compliance_status)
