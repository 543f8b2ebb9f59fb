"""Reads of the drift monitors (docs/reference/drift.md)."""

from typing import Any

from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from keys.models import Customer

SERIES_COLUMNS = (
    "index", "sequence", "decision_id", "user_id", "timestamp", "ai_confidence", "event", "p", "w", "x",
    "llr", "llr_sum", "restart", "signal", "conclusion", "alarm_id",
)  # fmt: skip


# Any: a point's columns, in SERIES_COLUMNS order
def series(
    monitor: DriftMonitor, *, low: int, high: int, page: int, limit: int
) -> tuple[list[tuple[Any, ...]], int]:
    """A page of the chart's points in ascending index, and how many the range holds. A chart's
    points are indexed 1, 2, ... without a gap (a restart does not renumber them) up to the
    monitor's `chart_points`, so the page is an index range read by the (monitor, baseline,
    index) index: no count and no offset, the same cost at any history length. Rows as tuples
    (SERIES_COLUMNS), not dicts: a page has up to 5,000."""
    last = min(high, monitor.chart_points)
    total = max(0, last - low + 1)
    start = low + (page - 1) * limit
    if start > last:
        return [], total
    rows = DriftPoint.objects.filter(
        monitor=monitor, baseline=False, index__gte=start, index__lte=min(last, start + limit - 1)
    )
    return list(rows.order_by("index").values_list(*SERIES_COLUMNS)), total


def alarms(customer: Customer) -> list[DriftAlarm]:
    """Every alarm of the customer, oldest first."""
    return list(DriftAlarm.objects.filter(customer=customer).order_by("raised_at", "id"))
