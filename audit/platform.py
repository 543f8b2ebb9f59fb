"""Figures over every customer's decisions, for the staff console. Nothing here is shown to a
customer's key."""

from audit.models import ChainHead


def platform_customers_by_decisions(*, limit: int = 50) -> list[tuple[str, int]]:
    """(customer id, decisions logged), busiest first: one row per customer from the chain heads."""
    rows = ChainHead.objects.order_by("-decisions", "customer_id").values_list("customer_id", "decisions")
    return list(rows[:limit])
