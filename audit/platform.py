"""Figures over every customer's decisions, for the staff console. Nothing here is shown to a
customer's key."""

import datetime as dt
from collections.abc import Collection

from django.db.models import Count, Max

from audit.models import ChainHead, Decision


def platform_customers_by_decisions(
    *, limit: int = 50, customer_ids: Collection[str] | None = None
) -> list[tuple[str, int]]:
    """(customer id, decisions logged), busiest first: one row per customer from the chain heads
    (of `customer_ids` only, when given)."""
    heads = ChainHead.objects.all()
    if customer_ids is not None:
        heads = heads.filter(customer_id__in=customer_ids)
    rows = heads.order_by("-decisions", "customer_id").values_list("customer_id", "decisions")
    return list(rows[:limit])


def platform_customers_active_since(since: dt.datetime) -> list[str]:
    """Ids of the customers whose chain grew since `since` (for periodic checks such as the
    rubber-stamp check; one row per customer from the chain heads)."""
    rows = ChainHead.objects.filter(updated_at__gte=since).order_by("customer_id")
    return list(rows.values_list("customer_id", flat=True))


def platform_chain_last_append_at() -> dt.datetime | None:
    """When any customer's chain last grew (the calibration engine's last activity; a
    platform figure, no customer's data)."""
    last: dt.datetime | None = ChainHead.objects.aggregate(last=Max("updated_at"))["last"]
    return last


def platform_probe_counts(customer_ids: list[str]) -> dict[str, int]:
    """Vigilance probes logged per customer (the probes' partial index alone), so that a decision
    count can say which of the chain's decisions were probes."""
    rows = (
        Decision.objects.filter(customer_id__in=customer_ids, probe_kind__isnull=False)
        .order_by()
        .values_list("customer_id")
        .annotate(n=Count("pk"))
    )
    return dict(rows)
