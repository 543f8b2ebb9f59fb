"""Figures over every customer's bias alerts, for the staff console. Nothing here is shown to a
customer's key."""

import datetime as dt
from collections.abc import Collection

from bias.models import BiasAlert, SubgroupAttachment
from config.counts import counts_by


def platform_bias_alerts_by_severity(
    *, since: dt.datetime, customer_ids: Collection[str] | None = None
) -> dict[str, int]:
    """Bias alerts stored since `since`, per severity (every severity present); of the customers
    `customer_ids` only when given."""
    qs = BiasAlert.objects.filter(created_at__gte=since)
    if customer_ids is not None:
        qs = qs.filter(customer_id__in=customer_ids)
    return counts_by(qs, "severity", ("critical", "high", "medium", "low"))


def platform_bias_last_activity() -> dt.datetime | None:
    latest = [
        BiasAlert.objects.order_by("-created_at").values_list("created_at", flat=True).first(),
        SubgroupAttachment.objects.order_by("-updated_at").values_list("updated_at", flat=True).first(),
    ]
    present = [t for t in latest if t is not None]
    return max(present) if present else None
