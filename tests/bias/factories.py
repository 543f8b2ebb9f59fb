"""Seeding decisions for the bias tests in bulk: Decision rows straight into the table, then
the bias app's bulk statistics path (the same arithmetic as the per-decision hook)."""

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from audit.models import Decision
from bias.services import subgroup_stats_on_decisions_bulk_logged
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


def category(spec: Spec) -> str:
    """The category of a decision (docs/reference/calibration.md, Category of a decision)."""
    followed = norm(spec.ai) == norm(spec.human)
    if spec.outcome is not None:
        ai_right = norm(spec.outcome) == norm(spec.ai)
        if followed and not ai_right:
            return "OVERTRUSTING"
        if not followed and ai_right:
            return "UNDERTRUSTING"
        return "CALIBRATED"
    if spec.confidence is not None:
        if followed and spec.confidence < 0.5:
            return "OVERTRUSTING"
        if not followed and spec.confidence >= 0.8:
            return "UNDERTRUSTING"
    return "CALIBRATED"


_counter = [0]


def decision_for(customer: Customer, spec: Spec) -> Decision:
    _counter[0] += 1
    decision_id = spec.decision_id or f"t{_counter[0]:08d}"
    return Decision(
        customer=customer,
        decision_id=decision_id,
        user_id=spec.user_id,
        model_id=spec.model_id,
        model_version=spec.model_version,
        ai_recommendation=spec.ai,
        ai_confidence=spec.confidence,
        user_decision=spec.human,
        outcome=spec.outcome,
        subgroups=spec.subgroups,
        timestamp=spec.timestamp or timezone.now() - dt.timedelta(hours=1),
        followed_ai=norm(spec.ai) == norm(spec.human),
        calibration_category=category(spec),
        payload_fingerprint=hashlib.sha256(decision_id.encode()).hexdigest(),
    )


def seed(customer_id: str, specs: list[Spec]) -> list[Decision]:
    customer, _ = Customer.objects.get_or_create(id=customer_id)
    decisions = [decision_for(customer, s) for s in specs]
    Decision.objects.bulk_create(decisions, batch_size=1000)
    subgroup_stats_on_decisions_bulk_logged(customer=customer, decisions=decisions)
    return decisions


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
