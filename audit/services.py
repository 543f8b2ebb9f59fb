"""Writes for decisions and the audit trail (C5): the public entry points. The decision
record is built in `audit.records`, appended to the chain by `audit.append`, and batches are
`audit.batch`. The calibration aggregates and the bias statistics are updated in the same
transaction as the decision."""

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.append import chain_append
from audit.batch import BATCH_MAX, BatchItem, BatchResult, decisions_log_batch
from audit.exceptions import DecisionNotFound
from audit.fields import DECISION_FIELDS
from audit.models import AuditEntry, Decision
from audit.records import (
    decision_conflict,
    ms,
    new_decision,
    outcome_apply,
    payload_fingerprint,
)
from bias import services as bias_services
from calibration import services as calibration_services
from keys.models import Customer

__all__ = [
    "BATCH_MAX",
    "DECISION_FIELDS",
    "BatchItem",
    "BatchResult",
    "LogResult",
    "chain_append",
    "decision_log",
    "decision_outcome_record",
    "decisions_log_batch",
    "payload_fingerprint",
]


@dataclass(frozen=True)
class LogResult:
    decision: Decision
    entry: AuditEntry
    created: bool


def _decision_entry(decision: Decision) -> AuditEntry:
    return decision.entries.filter(type=AuditEntry.Type.DECISION).order_by("sequence").first()  # type: ignore[return-value]


def decision_log(*, customer: Customer, data: dict[str, Any], source: str = "log") -> LogResult:
    """Record one decision (POST /log, POST /calibrate). A known decision_id with the same
    payload is a replay (created=False); with another payload, DECISION_CONFLICT.

    The chain head is locked last, just before commit: the decision row, the calibration
    aggregates, the bias statistics and the events are written first, so the per-customer
    critical section is three statements and the commit. Two requests racing on a new
    decision_id meet at the unique constraint; the loser retries and becomes a replay."""
    fingerprint = payload_fingerprint(data)
    try:
        return _decision_log_once(customer=customer, data=data, fingerprint=fingerprint, source=source)
    except IntegrityError:
        if not data.get("decision_id"):
            raise
        return _decision_log_once(customer=customer, data=data, fingerprint=fingerprint, source=source)


def _existing(*, customer: Customer, decision_id: str, fingerprint: str) -> LogResult | None:
    existing = Decision.objects.filter(customer=customer, decision_id=decision_id).first()
    if existing is None:
        return None
    if existing.payload_fingerprint != fingerprint:
        raise decision_conflict(decision_id)
    return LogResult(existing, _decision_entry(existing), created=False)


def _decision_log_once(
    *, customer: Customer, data: dict[str, Any], fingerprint: str, source: str
) -> LogResult:
    decision_id = data.get("decision_id")
    if decision_id:
        replay = _existing(customer=customer, decision_id=decision_id, fingerprint=fingerprint)
        if replay is not None:
            return replay
    now = ms(timezone.now())
    decision = new_decision(customer=customer, data=data, fingerprint=fingerprint, now=now)
    entry_id = AuditEntry._meta.get_field("id").get_default()
    with transaction.atomic():
        decision.save(force_insert=True)
        calibration_services.calibration_on_decision_logged(
            decision=decision, entry_id=entry_id, source=source
        )
        bias_services.subgroup_stats_on_decision_logged(decision=decision)
        entry = chain_append(
            customer_id=customer.pk,
            decision=decision,
            type=AuditEntry.Type.DECISION,
            logged_at=now,
            entry_id=entry_id,
        )
    return LogResult(decision, entry, created=True)


def decision_outcome_record(*, customer: Customer, decision_id: str, outcome: str) -> tuple[AuditEntry, bool]:
    """A later ground truth: append an `outcome` entry and update the decision (C5).
    The same outcome sent again answers the entry that recorded it (created=False).

    Locks in the same order as decision_log (decision and aggregate rows, then the chain
    head last), so the two never deadlock."""
    now = ms(timezone.now())
    with transaction.atomic():
        decision = (
            Decision.objects.select_for_update()
            .select_related("customer")
            .filter(customer=customer, decision_id=decision_id)
            .first()
        )
        if decision is None:
            raise DecisionNotFound(f"No decision '{decision_id}'.")
        if decision.outcome == outcome:
            last = decision.entries.filter(type=AuditEntry.Type.OUTCOME).order_by("-sequence").first()
            if last is not None and last.outcome == outcome:
                return last, False
        previous_outcome, previous_category = outcome_apply(decision, outcome)
        decision.save(update_fields=["outcome", "calibration_category"])
        entry_id = AuditEntry._meta.get_field("id").get_default()
        calibration_services.calibration_on_outcome_changed(
            decision=decision,
            previous_outcome=previous_outcome,
            previous_category=previous_category,
            entry_id=entry_id,
        )
        bias_services.subgroup_stats_on_outcome_changed(
            decision=decision, previous_outcome=previous_outcome, previous_category=previous_category
        )
        entry = chain_append(
            customer_id=customer.pk,
            decision=decision,
            type=AuditEntry.Type.OUTCOME,
            logged_at=now,
            entry_id=entry_id,
        )
    return entry, True
