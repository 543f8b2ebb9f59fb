"""Figures over every customer's bias alerts, for the staff console. Nothing here is shown to a
customer's key."""

import datetime as dt

from bias.models import BiasAlert, SubgroupAttachment
from config.counts import counts_by


def platform_bias_alerts_by_severity(*, since: dt.datetime) -> dict[str, int]:
    """Bias alerts stored since `since`, per severity (every severity present)."""
    return counts_by(
        BiasAlert.objects.filter(created_at__gte=since), "severity", ("critical", "high", "medium", "low")
    )


def platform_bias_last_activity() -> dt.datetime | None:
    latest = [
        BiasAlert.objects.order_by("-created_at").values_list("created_at", flat=True).first(),
        SubgroupAttachment.objects.order_by("-updated_at").values_list("updated_at", flat=True).first(),
    ]
    present = [t for t in latest if t is not None]
    return max(present) if present else None
