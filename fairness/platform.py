"""Figures over every customer's amplification alerts, for the staff console. Nothing here is
shown to a customer's key."""

from collections.abc import Collection

from django.db.models import Count

from config.counts import counts_by
from fairness.models import AmplificationAlert, FairnessSignal


def platform_open_alerts_by_severity(*, customer_ids: Collection[str] | None = None) -> dict[str, int]:
    """Alerts still to be dealt with (open or acknowledged), per severity (every severity present);
    of the customers `customer_ids` only when given."""
    qs = AmplificationAlert.objects.filter(status__in=("open", "acknowledged"))
    if customer_ids is not None:
        qs = qs.filter(customer_id__in=customer_ids)
    return counts_by(qs, "severity", ("critical", "high", "medium", "low"))


def platform_signals_ingested_total() -> int:
    return FairnessSignal.objects.count()


def platform_alerts_by_status() -> dict[str, int]:
    rows = AmplificationAlert.objects.values("status").annotate(n=Count("id")).order_by()
    return {row["status"]: row["n"] for row in rows}
