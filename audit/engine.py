"""/metrics: decisions logged, from the customers' chain heads (one row per customer),
never a COUNT(*) over the decisions."""

from typing import Any

from django.db.models import Sum

from audit.models import ChainHead


def metrics() -> dict[str, Any]:
    totals = ChainHead.objects.aggregate(decisions=Sum("decisions"), entries=Sum("sequence"))
    return {"decisions_logged": int(totals["decisions"] or 0), "audit_entries": int(totals["entries"] or 0)}
