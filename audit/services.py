"""Writes for decisions and the audit trail (C5).

Every write locks the customer's chain head row (SELECT ... FOR UPDATE on PostgreSQL;
SQLite's IMMEDIATE transactions serialise writers), so the sequence is gapless and each
entry's previous_hash is the hash of the entry before it, with any number of writers.
The calibration aggregates and the bias statistics are updated in the same transaction.
"""

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from audit.chain import canonical_json, canonical_template, entry_document, entry_hash
from audit.exceptions import DecisionConflict, DecisionNotFound
from audit.inputs import decision_validated, is_late_outcome, late_outcome_validated
from audit.models import AuditEntry, ChainHead, Decision
from bias import services as bias_services
from calibration import rules
from calibration import services as calibration_services
from config.api import require_object
from config.bulk import bulk_insert
from config.exceptions import DomainError
from config.timeutils import isoformat
from keys.models import Customer

DECISION_FIELDS = [
    "decision_id",
    "user_id",
    "model_id",
    "model_version",
    "ai_recommendation",
    "ai_confidence",
    "user_decision",
    "initial_decision",
    "outcome",
    "context",
    "subgroups",
    "metadata",
]


@dataclass(frozen=True)
class LogResult:
    decision: Decision
    entry: AuditEntry
    created: bool


def _ms(value: dt.datetime) -> dt.datetime:
    """Timestamps are kept to the millisecond, the precision they are shown (and hashed) with."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def payload_fingerprint(data: dict[str, Any]) -> str:
    """The normalised request: the same decision sent again (alias or not, any offset)
    has the same fingerprint. The timestamp counts only when the client sent one."""
    doc = {name: data.get(name) for name in DECISION_FIELDS}
    timestamp = data.get("timestamp")
    doc["timestamp"] = isoformat(_ms(timestamp)) if timestamp is not None else None
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def _ensure_head(customer_id: str) -> None:
    ChainHead.objects.bulk_create([ChainHead(customer_id=customer_id)], ignore_conflicts=True)


def _new_entry(
    *, customer_id: str, decision: Decision, type: str, logged_at: dt.datetime, entry_id: str
) -> AuditEntry:
    return AuditEntry(
        id=entry_id,
        customer_id=customer_id,
        decision=decision,
        type=type,
        decision_ref=decision.decision_id,
        timestamp=decision.timestamp,
        logged_at=logged_at,
        user_id=decision.user_id,
        model_id=decision.model_id,
        model_version=decision.model_version,
        ai_recommendation=decision.ai_recommendation,
        ai_confidence=decision.ai_confidence,
        user_decision=decision.user_decision,
        followed_ai=decision.followed_ai,
        calibration_category=decision.calibration_category,
        outcome=decision.outcome,
        context=decision.context,
        subgroups=decision.subgroups,
    )


def chain_append(
    *, customer_id: str, decision: Decision, type: str, logged_at: dt.datetime, entry_id: str | None = None
) -> AuditEntry:
    """Append one entry to the customer's chain. Call it last in the transaction: the
    head row stays locked until commit, so everything before it runs outside the
    per-customer critical section."""
    entry = _new_entry(
        customer_id=customer_id,
        decision=decision,
        type=type,
        logged_at=logged_at,
        entry_id=entry_id or AuditEntry._meta.get_field("id").get_default(),
    )
    if connection.vendor == "postgresql":
        return _append_postgresql(entry, counts_decision=type == AuditEntry.Type.DECISION)
    return _append_locked_row(entry, counts_decision=type == AuditEntry.Type.DECISION)


def _append_locked_row(entry: AuditEntry, *, counts_decision: bool) -> AuditEntry:
    """Portable path (SQLite: IMMEDIATE transactions already serialise writers):
    lock the head row, hash in Python, insert the entry, move the head."""
    head = ChainHead.objects.select_for_update().filter(customer_id=entry.customer_id).first()
    if head is None:
        _ensure_head(entry.customer_id)
        head = ChainHead.objects.select_for_update().get(customer_id=entry.customer_id)
    entry.sequence = head.sequence + 1
    entry.previous_hash = head.head_hash
    entry.hash = entry_hash(entry_document(entry))
    entry.save(force_insert=True)
    head.previous_head_hash = head.head_hash
    head.sequence = entry.sequence
    head.head_hash = entry.hash
    head.updated_at = entry.logged_at
    head.decisions += int(counts_decision)
    head.save(update_fields=["sequence", "head_hash", "previous_head_hash", "updated_at", "decisions"])
    return entry


_ENTRY_INSERT_COLUMNS = [
    "id", "customer_id", "decision_id", "type", "decision_ref", "timestamp", "logged_at", "user_id", "model_id",
    "model_version", "ai_recommendation", "ai_confidence", "user_decision", "followed_ai", "calibration_category",
    "outcome", "context", "subgroups",
]  # fmt: skip

# One statement is the whole critical section on PostgreSQL: the UPDATE takes the head
# row lock (held to commit; a concurrent writer waits, then re-reads the committed head),
# computes the new hash in SQL from the canonical JSON template, and the INSERT stores the
# entry with the sequence and hashes the UPDATE returned. SET expressions see the old row.
_APPEND_SQL = """
WITH head AS (
    UPDATE audit_chainhead
    SET previous_head_hash = head_hash, sequence = sequence + 1, decisions = decisions + %s, updated_at = %s,
        head_hash = encode(sha256(convert_to(head_hash || %s || head_hash || %s || (sequence + 1)::text || %s, 'UTF8')), 'hex')
    WHERE customer_id = %s
    RETURNING sequence, head_hash, previous_head_hash
)
INSERT INTO audit_auditentry (id, customer_id, decision_id, type, decision_ref, timestamp, logged_at, user_id, model_id,
    model_version, ai_recommendation, ai_confidence, user_decision, followed_ai, calibration_category, outcome, context,
    subgroups, sequence, hash, previous_hash)
SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb,
    head.sequence, head.head_hash, head.previous_head_hash
FROM head
RETURNING sequence, hash, previous_hash
"""


def _append_postgresql(entry: AuditEntry, *, counts_decision: bool) -> AuditEntry:
    head_part, tail = canonical_template(entry_document(_with_link_placeholders(entry)))
    params: list[Any] = [
        int(counts_decision),
        entry.logged_at,
        head_part + '"previous_hash":"',
        '","sequence":',
        tail,
        entry.customer_id,
    ]
    for column in _ENTRY_INSERT_COLUMNS:
        value = getattr(entry, "decision_id" if column == "decision_id" else column)
        params.append(json.dumps(value, ensure_ascii=False) if column == "subgroups" else value)
    with connection.cursor() as cursor:
        cursor.execute(_APPEND_SQL, params)
        row = cursor.fetchone()
        if row is None:  # the customer's first entry: create the head, then append
            _ensure_head(entry.customer_id)
            cursor.execute(_APPEND_SQL, params)
            row = cursor.fetchone()
    entry.sequence, entry.hash, entry.previous_hash = row
    entry._state.adding = False
    entry._state.db = connection.alias
    return entry


def _with_link_placeholders(entry: AuditEntry) -> AuditEntry:
    entry.sequence = 0
    entry.previous_hash = ""
    entry.hash = ""
    return entry


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
        raise DecisionConflict(
            f"decision_id '{decision_id}' was already logged with a different payload.",
            errors=[{"field": "decision_id", "message": "already used with a different payload"}],
        )
    return LogResult(existing, _decision_entry(existing), created=False)


def _decision_log_once(
    *, customer: Customer, data: dict[str, Any], fingerprint: str, source: str
) -> LogResult:
    decision_id = data.get("decision_id")
    if decision_id:
        replay = _existing(customer=customer, decision_id=decision_id, fingerprint=fingerprint)
        if replay is not None:
            return replay
    now = _ms(timezone.now())
    decision = _new_decision(customer=customer, data=data, fingerprint=fingerprint, now=now)
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
    now = _ms(timezone.now())
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
        previous_outcome, previous_category = decision.outcome, decision.calibration_category
        decision.outcome = outcome
        decision.calibration_category = rules.record_category(
            ai_recommendation=decision.ai_recommendation,
            user_decision=decision.user_decision,
            confidence=decision.ai_confidence,
            outcome=outcome,
        )
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


# --- batches (POST /log/batch, import_decisions) ------------------------------------------------

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
    value = body.get("decision_id") if isinstance(body, dict) else None
    return value if isinstance(value, str) else None


def _batch_once(
    *,
    customer: Customer,
    items: list[Any],
    parsed: list[tuple[str, dict[str, Any]] | DomainError],
    source: str,
) -> BatchResult:
    ids = sorted({p[1]["decision_id"] for p in parsed if isinstance(p, tuple) and p[1].get("decision_id")})
    now = _ms(timezone.now())
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
                previous_outcome, previous_category = decision.outcome, decision.calibration_category
                decision.outcome = data["outcome"]
                decision.calibration_category = rules.record_category(
                    ai_recommendation=decision.ai_recommendation,
                    user_decision=decision.user_decision,
                    confidence=decision.ai_confidence,
                    outcome=decision.outcome,
                )
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
                entry = _new_entry(
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
                    error = DecisionConflict(
                        f"decision_id '{decision_id}' was already logged with a different payload.",
                        errors=[{"field": "decision_id", "message": "already used with a different payload"}],
                    )
                    results.append(BatchItem(index, 409, decision_id, error=error))
                    continue
                result = BatchItem(index, 200, decision_id, entry=first_entry.get(decision_id))
                if result.entry is None:
                    replays_of_stored.append(result)
                results.append(result)
                continue
            decision = _new_decision(customer=customer, data=data, fingerprint=fingerprint, now=now)
            entry_id = new_entry_id()
            calibration_services.calibration_on_decision_logged(
                decision=decision, entry_id=entry_id, source=source, fold=fold
            )
            subgroups.decision_logged(decision)
            entry = _new_entry(
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
            _chain_append_many(customer.pk, entries, decisions=len(new_decisions), logged_at=now)
    return BatchResult(results)


def _new_decision(
    *, customer: Customer, data: dict[str, Any], fingerprint: str, now: dt.datetime
) -> Decision:
    """The decision row of a new decision (not saved), with its C6 category."""
    fields = {name: data.get(name) for name in DECISION_FIELDS if name != "decision_id"}
    decision = Decision(customer=customer, **fields)
    if data.get("decision_id"):
        decision.decision_id = data["decision_id"]
    decision.context = decision.context or ""
    decision.subgroups = decision.subgroups or {}
    decision.metadata = decision.metadata or {}
    decision.timestamp = _ms(data.get("timestamp") or now)
    decision.logged_at = now
    decision.followed_ai = rules.followed(decision.ai_recommendation, decision.user_decision)
    decision.calibration_category = rules.record_category(
        ai_recommendation=decision.ai_recommendation,
        user_decision=decision.user_decision,
        confidence=decision.ai_confidence,
        outcome=decision.outcome,
    )
    decision.payload_fingerprint = fingerprint
    return decision


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


def _chain_append_many(
    customer_id: str, entries: list[AuditEntry], *, decisions: int, logged_at: dt.datetime
) -> None:
    """Append entries in order under one lock of the chain head: hashes in one pass, one
    bulk insert, one head update. Called last in the transaction, like chain_append."""
    head = ChainHead.objects.select_for_update().filter(customer_id=customer_id).first()
    if head is None:
        _ensure_head(customer_id)
        head = ChainHead.objects.select_for_update().get(customer_id=customer_id)
    sequence, previous = head.sequence, head.head_hash
    for entry in entries:
        sequence += 1
        entry.sequence, entry.previous_hash = sequence, previous
        entry.hash = entry_hash(entry_document(entry))
        previous = entry.hash
    bulk_insert(AuditEntry, entries)
    ChainHead.objects.filter(pk=head.pk).update(
        previous_head_hash=entries[-2].hash if len(entries) > 1 else head.head_hash,
        sequence=sequence,
        head_hash=previous,
        updated_at=logged_at,
        decisions=F("decisions") + decisions,
    )
