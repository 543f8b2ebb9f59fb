"""/metrics: decisions logged, from the customers' chain heads (one row per customer),
never a COUNT(*) over the decisions."""

from typing import Any

from django.db.models import Sum

from audit.models import ChainHead
from keys.models import Customer


def metrics() -> dict[str, Any]:
    totals = ChainHead.objects.aggregate(decisions=Sum("decisions"), entries=Sum("sequence"))
    return {"decisions_logged": int(totals["decisions"] or 0), "audit_entries": int(totals["entries"] or 0)}


def customer_metrics(customer: Customer) -> dict[str, Any]:
    """The caller's own figures for a non-admin key: one row, its chain head."""
    head = ChainHead.objects.filter(customer=customer).values_list("decisions", "sequence").first()
    decisions, entries = head if head is not None else (0, 0)
    return {"decisions_logged": int(decisions), "audit_entries": int(entries)}
