"""Figures over every customer's decisions, for the staff console. Nothing here is shown to a
customer's key."""

import datetime as dt

from django.db.models import Max

from audit.models import ChainHead


def platform_customers_by_decisions(*, limit: int = 50) -> list[tuple[str, int]]:
    """(customer id, decisions logged), busiest first: one row per customer from the chain heads."""
    rows = ChainHead.objects.order_by("-decisions", "customer_id").values_list("customer_id", "decisions")
    return list(rows[:limit])


def platform_customers_active_since(since: dt.datetime) -> list[str]:
    """Ids of the customers whose chain grew since `since` (for periodic checks such as the
    rubber-stamp check; one row per customer from the chain heads)."""
    rows = ChainHead.objects.filter(updated_at__gte=since).order_by("customer_id")
    return list(rows.values_list("customer_id", flat=True))


def platform_chain_last_append_at() -> dt.datetime | None:
    """When any customer's chain last grew (the calibration engine's last activity; a
    platform figure, no customer's data)."""
    return ChainHead.objects.aggregate(last=Max("updated_at"))["last"]
