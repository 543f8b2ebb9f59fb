"""/metrics: decisions logged, from the customers' chain heads (one row per customer),
never a COUNT(*) over the decisions."""

import logging
from collections.abc import Callable

from django.db.models import Sum

from audit import checkpoint_key
from audit.models import ChainHead
from config.exceptions import HealthProblem
from config.jsondoc import JSONObject
from keys.models import Customer

logger = logging.getLogger(__name__)


# the engine's figures by name, rendered as JSON
def metrics() -> JSONObject:
    totals = ChainHead.objects.aggregate(decisions=Sum("decisions"), entries=Sum("sequence"))
    return {"decisions_logged": int(totals["decisions"] or 0), "audit_entries": int(totals["entries"] or 0)}


# the engine's figures by name, rendered as JSON
def customer_metrics(customer: Customer) -> JSONObject:
    """The caller's own figures for a non-admin key: one row, its chain head."""
    head = ChainHead.objects.filter(customer=customer).values_list("decisions", "sequence").first()
    decisions, entries = head if head is not None else (0, 0)
    return {"decisions_logged": int(decisions), "audit_entries": int(entries)}


# a health check's document by name, rendered as JSON
def health_checks() -> dict[str, Callable[[], JSONObject | None]]:
    """/health: the checkpoint signing key can be read (else checkpoints are paused; logging
    goes on), docs/reference/checkpoints.md, "The signing key"."""
    return {"checkpoint_key": _checkpoint_key_check}


# a health check's document by name, rendered as JSON
def _checkpoint_key_check() -> JSONObject | None:
    problem = checkpoint_key.key_problem()
    if problem is not None:
        logger.error("checkpoints paused: %s", problem)
        raise HealthProblem("checkpoints paused: the signing key cannot be used (the service log says why)")
    return None
