"""Appending to a customer's hash chain (C5).

Every append locks the customer's chain head row (SELECT ... FOR UPDATE, or on PostgreSQL
one UPDATE ... RETURNING; SQLite's IMMEDIATE transactions serialise writers), so the
sequence is gapless and each entry's previous_hash is the hash of the entry before it, with
any number of writers. Call it last in the transaction: the head row stays locked until
commit, so everything before it runs outside the per-customer critical section."""

import datetime as dt
import json
from typing import Any

from django.db import connection
from django.db.models import F

from audit.chain import canonical_template, entry_document, entry_hash
from audit.checkpoints import chain_extended
from audit.fields import SNAPSHOT_FIELDS
from audit.models import AuditEntry, ChainHead, Decision
from config.bulk import bulk_insert


def _ensure_head(customer_id: str) -> None:
    ChainHead.objects.bulk_create([ChainHead(customer_id=customer_id)], ignore_conflicts=True)


def new_entry(
    *, customer_id: str, decision: Decision, type: str, logged_at: dt.datetime, entry_id: str
) -> AuditEntry:
    return AuditEntry(
        id=entry_id,
        customer_id=customer_id,
        decision=decision,
        type=type,
        decision_ref=decision.decision_id,
        logged_at=logged_at,
        **{name: getattr(decision, name) for name in SNAPSHOT_FIELDS},
    )


def chain_append(
    *, customer_id: str, decision: Decision, type: str, logged_at: dt.datetime, entry_id: str | None = None
) -> AuditEntry:
    """Append one entry to the customer's chain. Call it last in the transaction: the
    head row stays locked until commit, so everything before it runs outside the
    per-customer critical section."""
    entry = new_entry(
        customer_id=customer_id,
        decision=decision,
        type=type,
        logged_at=logged_at,
        entry_id=entry_id or AuditEntry._meta.get_field("id").get_default(),
    )
    append = _append_postgresql if connection.vendor == "postgresql" else _append_locked_row
    entry = append(entry, counts_decision=type == AuditEntry.Type.DECISION)
    # The Merkle tree and signed checkpoints (docs/reference/checkpoints.md), under the same lock.
    chain_extended(customer_id=customer_id, start_size=entry.sequence - 1, entry_hashes=[entry.hash])
    return entry


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
    "id",
    "customer_id",
    "decision_id",
    "type",
    "decision_ref",
    "logged_at",
    *SNAPSHOT_FIELDS,
]

# One statement is the whole critical section on PostgreSQL: the UPDATE takes the head
# row lock (held to commit; a concurrent writer waits, then re-reads the committed head),
# computes the new hash in SQL from the canonical JSON template, and the INSERT stores the
# entry with the sequence and hashes the UPDATE returned. SET expressions see the old row.
# The column names come from the fixed field list; every value is a bound parameter.
_APPEND_SQL = """
WITH head AS (
    UPDATE audit_chainhead
    SET previous_head_hash = head_hash, sequence = sequence + 1, decisions = decisions + %s, updated_at = %s,
        head_hash = encode(sha256(convert_to(head_hash || %s || head_hash || %s || (sequence + 1)::text || %s, 'UTF8')), 'hex')
    WHERE customer_id = %s
    RETURNING sequence, head_hash, previous_head_hash
)
INSERT INTO audit_auditentry ({columns}, sequence, hash, previous_hash)
SELECT {values}, head.sequence, head.head_hash, head.previous_head_hash
FROM head
RETURNING sequence, hash, previous_hash
""".format(  # noqa: S608
    columns=", ".join(_ENTRY_INSERT_COLUMNS),
    values=", ".join("%s::jsonb" if column == "subgroups" else "%s" for column in _ENTRY_INSERT_COLUMNS),
)


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
        value = getattr(entry, column)
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


def chain_append_many(
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
    chain_extended(
        customer_id=customer_id, start_size=head.sequence, entry_hashes=[e.hash for e in entries]
    )  # the tree
    ChainHead.objects.filter(pk=head.pk).update(
        previous_head_hash=entries[-2].hash if len(entries) > 1 else head.head_hash,
        sequence=sequence,
        head_hash=previous,
        updated_at=logged_at,
        decisions=F("decisions") + decisions,
    )
