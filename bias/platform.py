"""Figures over every customer's bias alerts, for the staff console. Nothing here is shown to a
customer's key."""

import datetime as dt

from bias.models import BiasAlert
from config.counts import counts_by


def platform_bias_alerts_by_severity(*, since: dt.datetime) -> dict[str, int]:
    """Bias alerts stored since `since`, per severity (every severity present)."""
    return counts_by(
        BiasAlert.objects.filter(created_at__gte=since), "severity", ("critical", "high", "medium", "low")
    )
