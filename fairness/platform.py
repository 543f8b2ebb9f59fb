"""Figures over every customer's amplification alerts, for the staff console. Nothing here is
shown to a customer's key."""

from config.counts import counts_by
from fairness.models import AmplificationAlert


def platform_open_alerts_by_severity() -> dict[str, int]:
    """Alerts still to be dealt with (open or acknowledged), per severity (every severity present)."""
    qs = AmplificationAlert.objects.filter(status__in=("open", "acknowledged"))
    return counts_by(qs, "severity", ("critical", "high", "medium", "low"))
