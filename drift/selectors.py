"""Reads of the drift monitors (docs/reference/drift.md)."""

from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from keys.models import Customer


def series(
    monitor: DriftMonitor, *, low: int, high: int, page: int, limit: int
) -> tuple[list[DriftPoint], int]:
    """A page of the chart's points in ascending index (by the (monitor, baseline, index) index)."""
    rows = DriftPoint.objects.filter(monitor=monitor, baseline=False, index__gte=low, index__lte=high)
    total = rows.count()
    start = (page - 1) * limit
    if start >= total:
        return [], total
    return list(rows.order_by("index")[start : start + limit]), total


def alarms(customer: Customer) -> list[DriftAlarm]:
    """Every alarm of the customer, oldest first."""
    return list(DriftAlarm.objects.filter(customer=customer).order_by("raised_at", "id"))
