"""Seeding decisions for the bias tests through the decision pipeline (one
`audit.services.decisions_log_batch` call, as `POST /log/batch` does), so the statistics, the
calibration aggregates and the audit entries are the service's own."""

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from audit.models import Decision
from audit.services import decisions_log_batch
from keys.models import Customer


@dataclass
class Spec:
    ai: str
    human: str
    subgroups: dict[str, Any] = field(default_factory=dict)
    outcome: str | None = None
    confidence: float | None = None
    model_id: str | None = "credit-v1"
    model_version: str | None = None
    timestamp: dt.datetime | None = None
    decision_id: str | None = None
    user_id: str = "u1"


def norm(value: str | None) -> str:
    return "" if value is None else value.strip().casefold()


_counter = [0]


def body_for(spec: Spec) -> dict[str, Any]:
    """The POST /log body of a spec."""
    _counter[0] += 1
    body: dict[str, Any] = {
        "decision_id": spec.decision_id or f"t{_counter[0]:08d}",
        "user_id": spec.user_id,
        "model_id": spec.model_id,
        "model_version": spec.model_version,
        "ai_recommendation": spec.ai,
        "ai_confidence": spec.confidence,
        "user_decision": spec.human,
        "outcome": spec.outcome,
        "subgroups": spec.subgroups,
        "timestamp": (spec.timestamp or timezone.now() - dt.timedelta(hours=1)).isoformat(),
    }
    return {key: value for key, value in body.items() if value is not None}


def seed(customer_id: str, specs: list[Spec]) -> list[Decision]:
    """Log the specs' decisions in one batch; the stored decisions, in the specs' order."""
    customer, _ = Customer.objects.get_or_create(id=customer_id)
    bodies = [body_for(spec) for spec in specs]
    result = decisions_log_batch(customer=customer, items=bodies)
    refused = [item for item in result.items if item.status >= 400]
    assert not refused, refused[:3]
    ids = [b["decision_id"] for b in bodies]
    stored = {d.decision_id: d for d in Decision.objects.filter(customer=customer, decision_id__in=ids)}
    return [stored[b["decision_id"]] for b in bodies]


def rated_groups(attribute: str, rates: dict[str, float], per_group: int, **extra: Any) -> list[Spec]:
    """`per_group` decisions per group whose final decisions are favourable at the given
    rate; the AI recommends exactly what the human decided (no override disparity)."""
    specs = []
    for group, rate in rates.items():
        favourable = round(rate * per_group)
        for i in range(per_group):
            value = "approve" if i < favourable else "deny"
            specs.append(Spec(ai=value, human=value, subgroups={attribute: group}, **extra))
    return specs
