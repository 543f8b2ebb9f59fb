"""Batches of decisions (POST /log/batch, import_decisions): many POST /log bodies with the
effects of the same calls in order (C15), done set-wise."""

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.append import chain_append_many, new_entry
from audit.exceptions import DecisionNotFound
from audit.inputs import decision_validated, is_late_outcome, late_outcome_validated
from audit.models import AuditEntry, Decision
from audit.records import decision_conflict, ms, new_decision, outcome_apply, payload_fingerprint
from bias import services as bias_services
from calibration import services as calibration_services
from config.api import require_object
from config.bulk import bulk_insert
from config.exceptions import DomainError
from config.inputs import check_document, is_clean_text
from keys.models import Customer

BATCH_MAX = 1000


@dataclass
class BatchItem:
    """One item's result: `entry` for a stored (201) or replayed (200) item, `error` (a
    DomainError) for a rejected one."""

    index: int
    status: int
    decision_id: str | None
    entry: AuditEntry | None = None
    error: DomainError | None = None


@dataclass
class BatchResult:
    items: list[BatchItem]

    def count(self, status: int) -> int:
        return sum(1 for item in self.items if item.status == status)

    @property
    def accepted(self) -> int:
        return self.count(201)

    @property
    def replayed(self) -> int:
        return self.count(200)

    @property
    def rejected(self) -> int:
        return sum(1 for item in self.items if item.error is not None)


def _item_validated(body: Any) -> tuple[str, dict[str, Any]]:
    """("outcome" | "decision", validated data) exactly as POST /log validates its body."""
    check_document(body)  # the parser left the strings to the item (one bad item, one rejection)
    body = require_object(body)
    if is_late_outcome(body):
        return "outcome", late_outcome_validated(body)
    return "decision", decision_validated(body)


def decisions_log_batch(*, customer: Customer, items: list[Any], source: str = "log") -> BatchResult:
    """Many POST /log bodies with exactly the effects of the same calls in order (C15), done
    set-wise: one query for the known decisions, the decision rows in bulk, the calibration
    aggregates folded per (user, day) and the subgroup statistics per (group, day) before one
    upsert each, the chain head locked once and every hash computed in one pass. Every valid
    item is committed together; an invalid one is reported and stores nothing.

    A concurrent writer of the same new decision_id meets the unique constraint; the batch is
    then run once more and the item becomes a replay or a conflict of that decision."""
    parsed: list[tuple[str, dict[str, Any]] | DomainError] = []
    for body in items:
        try:
            parsed.append(_item_validated(body))
        except DomainError as exc:
            parsed.append(exc)
    try:
        return _batch_once(customer=customer, items=items, parsed=parsed, source=source)
    except IntegrityError:
        return _batch_once(customer=customer, items=items, parsed=parsed, source=source)


def _raw_decision_id(body: Any) -> str | None:
    """A rejected item's decision_id as sent, when it can be shown (a string that can be
    encoded: an unpaired surrogate could not be written into the answer)."""
    value = body.get("decision_id") if isinstance(body, dict) else None
    return value if isinstance(value, str) and is_clean_text(value) else None


def _batch_once(
    *,
    customer: Customer,
    items: list[Any],
    parsed: list[tuple[str, dict[str, Any]] | DomainError],
    source: str,
) -> BatchResult:
    ids = sorted({p[1]["decision_id"] for p in parsed if isinstance(p, tuple) and p[1].get("decision_id")})
    now = ms(timezone.now())
    new_entry_id = AuditEntry._meta.get_field("id").get_default
    results: list[BatchItem] = []
    with transaction.atomic():
        known: dict[str, Decision] = {}
        for start in range(0, len(ids), 900):  # SQLite's bound-parameter limit
            rows = Decision.objects.select_for_update().filter(
                customer=customer, decision_id__in=ids[start : start + 900]
            )
            known.update({d.decision_id: d for d in rows.order_by("pk")})
        existing = set(known)
        first_entry: dict[str, AuditEntry] = {}  # decision_id -> its decision entry (new in batch)
        last_outcome: dict[str, AuditEntry] = {}  # decision_id -> its latest outcome entry in batch
        replays_of_stored: list[BatchItem] = []
        new_decisions: list[Decision] = []
        changed: dict[str, Decision] = {}
        entries: list[AuditEntry] = []
        fold = calibration_services.AggregateFold()
        subgroups = bias_services.SubgroupBatch(customer.pk)
        for index, item in enumerate(parsed):
            if isinstance(item, DomainError):
                results.append(BatchItem(index, item.status, _raw_decision_id(items[index]), error=item))
                continue
            kind, data = item
            decision_id: str = data.get("decision_id") or ""
            error: DomainError
            if kind == "outcome":
                decision = known.get(decision_id)
                if decision is None:
                    error = DecisionNotFound(f"No decision '{decision_id}'.")
                    results.append(BatchItem(index, 404, decision_id, error=error))
                    continue
                if decision.outcome == data["outcome"]:
                    last = last_outcome.get(decision_id)
                    if last is None and decision_id in existing and decision_id not in changed:
                        last = (
                            decision.entries.filter(type=AuditEntry.Type.OUTCOME)
                            .order_by("-sequence")
                            .first()
                        )
                    if last is not None and last.outcome == data["outcome"]:
                        results.append(BatchItem(index, 200, decision_id, entry=last))
                        continue
                previous_outcome, previous_category = outcome_apply(decision, data["outcome"])
                entry_id = new_entry_id()
                calibration_services.calibration_on_outcome_changed(
                    decision=decision,
                    previous_outcome=previous_outcome,
                    previous_category=previous_category,
                    entry_id=entry_id,
                    fold=fold,
                )
                subgroups.outcome_changed(
                    decision, previous_outcome=previous_outcome, previous_category=previous_category
                )
                entry = new_entry(
                    customer_id=customer.pk,
                    decision=decision,
                    type=AuditEntry.Type.OUTCOME,
                    logged_at=now,
                    entry_id=entry_id,
                )
                entries.append(entry)
                last_outcome[decision_id] = entry
                if decision_id in existing:
                    changed[decision_id] = decision
                results.append(BatchItem(index, 201, decision_id, entry=entry))
                continue
            fingerprint = payload_fingerprint(data)
            if decision_id and decision_id in known:
                stored = known[decision_id]
                if stored.payload_fingerprint != fingerprint:
                    error = decision_conflict(decision_id)
                    results.append(BatchItem(index, 409, decision_id, error=error))
                    continue
                result = BatchItem(index, 200, decision_id, entry=first_entry.get(decision_id))
                if result.entry is None:
                    replays_of_stored.append(result)
                results.append(result)
                continue
            decision = new_decision(customer=customer, data=data, fingerprint=fingerprint, now=now)
            entry_id = new_entry_id()
            calibration_services.calibration_on_decision_logged(
                decision=decision, entry_id=entry_id, source=source, fold=fold
            )
            subgroups.decision_logged(decision)
            entry = new_entry(
                customer_id=customer.pk,
                decision=decision,
                type=AuditEntry.Type.DECISION,
                logged_at=now,
                entry_id=entry_id,
            )
            entries.append(entry)
            known[decision.decision_id] = decision
            first_entry[decision.decision_id] = entry
            new_decisions.append(decision)
            results.append(BatchItem(index, 201, decision.decision_id, entry=entry))

        bulk_insert(Decision, new_decisions, with_ids=True)
        for entry in entries:  # the rows have their primary keys now
            entry.decision_id = entry.decision.pk
        if changed:
            Decision.objects.bulk_update(
                list(changed.values()), ["outcome", "calibration_category"], batch_size=500
            )
        subgroups.apply()
        calibration_services.aggregates_fold_apply(customer_id=customer.pk, fold=fold)
        if replays_of_stored:
            _replayed_entries(known, replays_of_stored)
        if entries:
            chain_append_many(customer.pk, entries, decisions=len(new_decisions), logged_at=now)
    return BatchResult(results)


def _replayed_entries(known: dict[str, Decision], replays: list[BatchItem]) -> None:
    """The decision entries of replayed stored decisions, in one query."""
    pks = sorted({known[item.decision_id].pk for item in replays if item.decision_id})
    by_decision: dict[int, AuditEntry] = {}
    for start in range(0, len(pks), 900):
        rows = AuditEntry.objects.filter(
            decision_id__in=pks[start : start + 900], type=AuditEntry.Type.DECISION
        )
        for entry in rows.order_by("-sequence"):
            by_decision[entry.decision_id] = entry  # the lowest sequence wins
    for item in replays:
        item.entry = by_decision.get(known[item.decision_id].pk) if item.decision_id else None
