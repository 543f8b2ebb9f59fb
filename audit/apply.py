"""The applying step of the decision pipeline: a plan's effects written set-wise, in the order
every writer uses (docs/reference/decisions.md, "Order of effects"): the new decision rows
(one insert), the stored rows a later ground truth changed (one update), each contributor's
deltas (its own upserts), the events (one insert), and last the audit entries on the
customer's chain, with the Merkle tree of signed checkpoints extended under the same head lock.

One applier per backend; each apply() reads in the order the statements go on the wire.

- SqliteApplier: every statement in turn. SQLite's IMMEDIATE transactions serialise writers.
- PostgresApplier, a small plan (fewer than INGEST_SETWISE_FROM entries, whatever its events:
  a POST /log, a group of them, a small batch): every statement in psycopg's pipeline
  mode, so the server runs them in order but none waits for the one before it; the results
  (the new decisions' keys, the contributors' guessed-empty loads, the webhooks read, the
  entries' appends) are read once the pipeline is left. Each entry is appended by one
  statement that locks the head row, hashes the entry in SQL and inserts it.
- PostgresApplier, a large plan: in one pipeline the decisions inserted, each contributor's
  deltas derived set-wise in SQL from its changes sent as arrays, and the events inserted (the
  entries sealed meanwhile), then the head row locked, the entries linked (audit.plan.link),
  COPYed, the head moved.

The chain head is locked last: the head row stays locked until commit, so everything before
it runs outside the per-customer critical section."""

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import F

from audit import registry, tree
from audit.chain import Template, entries_seal
from audit.checkpoints import chain_extended
from audit.fields import SNAPSHOT_FIELDS
from audit.models import AuditEntry, ChainHead, Decision
from audit.plan import Plan, link
from config.db import prepared
from config.db.bulk import bulk_insert, insert_sent
from keys.models import Customer
from webhooks.services import events_emit, events_emit_sent


class LoadsFoundRows(Exception):
    """A write planned on the guess that every contributor's load finds nothing found rows: the
    pipeline rolls it back and writes again, loading first (audit.pipeline)."""


def plan_apply(plan: Plan, *, customer: Customer, loads_guessed: Sequence[str] | None = None) -> int:
    """Write every effect of the plan (inside the caller's transaction); the chain head's
    `followers` as the append read it (0 without entries). `loads_guessed`: the decision_ids
    whose contributors' loads the plan guessed empty (PostgreSQL only); they are sent first,
    and LoadsFoundRows is raised when one found rows."""
    if connection.vendor == "postgresql":
        return PostgresApplier(customer, loads_guessed).apply(plan)
    return SqliteApplier(customer).apply(plan)


def _decisions_update(changed: list[Decision]) -> None:
    if len(changed) == 1:
        Decision.objects.filter(pk=changed[0].pk).update(
            outcome=changed[0].outcome, calibration_category=changed[0].calibration_category
        )
    elif changed:
        Decision.objects.bulk_update(changed, ["outcome", "calibration_category"], batch_size=500)


def _entries_keyed(plan: Plan) -> None:
    """The entries' decision keys, once the new decisions have theirs (a plan's entries record
    their decision, cached on the entry)."""
    for entry in plan.entries:
        entry.__dict__["decision_id"] = entry._state.fields_cache["decision"].pk


class SqliteApplier:
    def __init__(self, customer: Customer) -> None:
        self.customer = customer

    def apply(self, plan: Plan) -> int:
        bulk_insert(Decision, plan.new_decisions)
        _decisions_update(plan.changed)
        for contributor, acc in plan.contributions:
            contributor.apply(customer_id=self.customer.pk, acc=acc, setwise=False)
        events_emit(customer=self.customer, events=plan.events)
        _entries_keyed(plan)
        if not plan.entries:
            return 0
        return entries_append(self.customer.pk, plan.entries, decisions=len(plan.new_decisions))


class PostgresApplier:
    def __init__(self, customer: Customer, loads_guessed: Sequence[str] | None) -> None:
        self.customer = customer
        self.loads_guessed = loads_guessed

    def apply(self, plan: Plan) -> int:
        if len(plan.entries) >= settings.INGEST_SETWISE_FROM:
            return self.apply_large(plan)
        return self.apply_pipelined(plan)

    def apply_pipelined(self, plan: Plan) -> int:
        customer_id = self.customer.pk
        # Errors collected when the block ends are raised as Django's (IntegrityError for a
        # decision_id written concurrently, which audit.pipeline retries), like any statement's.
        with connection.wrap_database_errors, connection.connection.pipeline():
            loads = self._loads_sent()
            decisions = (
                insert_sent(Decision, plan.new_decisions, with_ids=True) if plan.new_decisions else None
            )
            _decisions_update(plan.changed)
            for contributor, acc in plan.contributions:
                contributor.apply(customer_id=customer_id, acc=acc, setwise=False)
            # The events' insert and the webhooks read; the deliveries are written from them below.
            _, deliveries_write = events_emit_sent(customer=self.customer, events=plan.events)
            # Up to APPEND_EACH_UP_TO entries: each one's append and tree statement, here.
            appends = None
            if 0 < len(plan.entries) <= APPEND_EACH_UP_TO:
                appends = _append_sent(plan.entries, decisions=len(plan.new_decisions))
        # Read once the pipeline is left: its Sync collects every result in one wait, where a
        # read inside the block would wait on a Flush and then on the exit's Sync.
        if any(load() for load in loads):
            raise LoadsFoundRows
        if decisions is not None:
            decisions.keys_read()
        deliveries_write()
        _entries_keyed(plan)
        if appends is not None:
            tree_extended = _append_finish(appends)
            chain_extended(
                customer_id=customer_id,
                start_size=plan.entries[0].sequence - 1,
                entry_hashes=[entry.hash for entry in plan.entries],
                tree_extended=tree_extended,
            )
            return appends.followers
        if plan.entries:
            return entries_append(customer_id, plan.entries, decisions=len(plan.new_decisions))
        return 0

    def apply_large(self, plan: Plan) -> int:
        customer_id = self.customer.pk
        loads = self._loads_sent()
        if any(load() for load in loads):
            raise LoadsFoundRows
        # The decisions' insert, every contributor's set-wise statement (its changes as one array
        # per column), the events' insert and the webhooks read in one pipeline: each statement's
        # arrays built while the server runs the one before it, the entries sealed while it
        # derives the rows (their links are spliced in under the head's lock, below).
        with connection.wrap_database_errors, connection.connection.pipeline():
            decisions = (
                insert_sent(Decision, plan.new_decisions, with_ids=True) if plan.new_decisions else None
            )
            _decisions_update(plan.changed)
            for contributor, acc in plan.contributions:
                contributor.apply(customer_id=customer_id, acc=acc, setwise=True)
            _, deliveries_write = events_emit_sent(customer=self.customer, events=plan.events)
            entries_seal(plan.entries)
        if decisions is not None:
            decisions.keys_read()
        deliveries_write()
        _entries_keyed(plan)
        if not plan.entries:
            return 0
        return entries_append(customer_id, plan.entries, decisions=len(plan.new_decisions))

    # Any: what a contributor's load read
    def _loads_sent(self) -> list[Callable[[], Any]]:
        if self.loads_guessed is None:
            return []
        ids = list(self.loads_guessed)
        return [c.load_sent(customer_id=self.customer.pk, decision_ids=ids) for c in registry.contributors()]


def entries_append(customer_id: str, entries: list[AuditEntry], *, decisions: int) -> int:
    """Append the entries, in order, to the customer's chain (the last write of a plan), then
    extend the chain's Merkle tree with them under the same head lock, in the same
    transaction (docs/reference/checkpoints.md). Answers the head's `followers`, read with it."""
    tree_extended = False
    if connection.vendor == "postgresql" and len(entries) == 1:
        tree_extended, followers = _append_one_postgresql(entries[0], decisions=decisions)
    else:
        followers = _append_locked(customer_id, entries, decisions=decisions)
    chain_extended(
        customer_id=customer_id,
        start_size=entries[0].sequence - 1,
        entry_hashes=[e.hash for e in entries],
        tree_extended=tree_extended,
    )
    return followers


def _append_locked(customer_id: str, entries: list[AuditEntry], *, decisions: int) -> int:
    head = ChainHead.objects.select_for_update().filter(customer_id=customer_id).first()
    if head is None:
        _ensure_head(customer_id)
        head = ChainHead.objects.select_for_update().get(customer_id=customer_id)
    previous_head = head.head_hash
    sequence, head_hash = link(entries, sequence=head.sequence, head_hash=head.head_hash)
    bulk_insert(AuditEntry, entries)
    ChainHead.objects.filter(pk=head.pk).update(
        previous_head_hash=entries[-2].hash if len(entries) > 1 else previous_head,
        sequence=sequence,
        head_hash=head_hash,
        updated_at=entries[-1].logged_at,
        decisions=F("decisions") + decisions,
    )
    return head.followers


def _ensure_head(customer_id: str) -> None:
    ChainHead.objects.bulk_create([ChainHead(customer_id=customer_id)], ignore_conflicts=True)


_ENTRY_INSERT_COLUMNS = [
    "id",
    "customer_id",
    "decision_id",
    "type",
    "decision_ref",
    "logged_at",
    *SNAPSHOT_FIELDS,
    "format",
    "salt",
    "erased",
]

_JSON_COLUMNS = ("subgroups", "probe")


def _cast(column: str) -> str:
    """The column's type for a server-bound parameter, without a length (a cast to
    varchar(n) would cut a longer value where the insert refuses it)."""
    return re.sub(r"\(.*\)", "", AuditEntry._meta.get_field(column).db_type(connection) or "text")


# The whole critical section in one statement: the UPDATE takes the head row lock (held to
# commit; a concurrent writer waits, then re-reads the committed head), splices the two link
# values into the entry's canonical text (audit.chain.Template) and hashes it in SQL, and the
# INSERT stores the entry, its canonical text and the sequence and hashes the UPDATE returned;
# the head's `followers` come back beside them. SET expressions see the old row. The column
# names come from the fixed field list; every value is a bound parameter.
_CANONICAL = "%s::text || {previous} || %s::text || {sequence}::text || %s::text"
_APPEND_SQL = """
WITH head AS (
    UPDATE audit_chainhead
    SET previous_head_hash = head_hash, sequence = sequence + 1, decisions = decisions + %s::bigint,
        updated_at = %s::timestamptz,
        head_hash = encode(sha256(convert_to({hashed}, 'UTF8')), 'hex')
    WHERE customer_id = %s
    RETURNING sequence, head_hash, previous_head_hash, followers
), entry AS (
    INSERT INTO audit_auditentry ({columns}, sequence, hash, previous_hash, canonical)
    SELECT {values}, head.sequence, head.head_hash, head.previous_head_hash, {stored}
    FROM head
    RETURNING sequence, hash, previous_hash, canonical
)
SELECT entry.sequence, entry.hash, entry.previous_hash, entry.canonical, head.followers FROM entry, head
"""


@functools.cache
def _append_sql() -> str:
    """The append's text, each entry value cast to its column's PostgreSQL type (a parameter
    bound on the server has a type; the casts make it the column's)."""
    return _APPEND_SQL.format(
        hashed=_CANONICAL.format(previous="head_hash", sequence="(sequence + 1)"),
        stored=_CANONICAL.format(previous="head.previous_head_hash", sequence="head.sequence"),
        columns=", ".join(_ENTRY_INSERT_COLUMNS),
        values=", ".join(_value(column) for column in _ENTRY_INSERT_COLUMNS),
    )


def _value(column: str) -> str:
    if column == "decision_id":
        # The decision's key when known, else read by (customer, decision_id): a new decision
        # inserted earlier in the same pipeline has no key in Python yet.
        return (
            f"COALESCE(%s::bigint, (SELECT id FROM {Decision._meta.db_table}"  # noqa: S608 - the model's table
            " WHERE customer_id = %s AND decision_id = %s::text))"
        )
    return f"%s::{_cast(column)}"


# A plan of up to this many entries in pipeline mode (a group of single requests, audit.group; a
# small batch) appends them by the single-append statement and the tree's statement each, in
# the write's one round trip: locking the head row, linking in Python, inserting and moving the
# head took three more round trips under the head's lock and the ORM's CPU. Each entry's
# statements read the head row the one before it moved.
APPEND_EACH_UP_TO = 16


@dataclass
class _PendingAppend:
    entries: list[AuditEntry]
    params: list[list[Any]]
    appends: list[CursorWrapper]
    nodes: list[CursorWrapper]
    followers: int = 0  # the head's, read by the appends


def _append_one_postgresql(entry: AuditEntry, *, decisions: int) -> tuple[bool, int]:
    """Append one entry by one statement and extend the Merkle tree by the next, in one round
    trip (see _append_sent). True when the tree was extended so; the head's followers."""
    with connection.wrap_database_errors, connection.connection.pipeline():
        pending = _append_sent([entry], decisions=decisions)
    return _append_finish(pending), pending.followers


def _append_sent(entries: list[AuditEntry], *, decisions: int) -> _PendingAppend:
    """Send, in the caller's pipeline, each entry's one-statement append and then the Merkle
    tree's statement (audit.tree.APPEND_ONE_SQL: a statement of its own, it reads the head
    row this transaction has just moved), all prepared; _append_finish reads them once the
    pipeline is left. The first append counts the plan's new decisions on the head."""
    templates = entries_seal(entries)  # sealed here unless their appender did
    pending = _PendingAppend(entries, [], [], [])
    for at, (entry, template) in enumerate(zip(entries, templates, strict=True)):
        params = _append_params(entry, template, decisions=decisions if at == 0 else 0)
        append, nodes = prepared.cursor(), prepared.cursor()
        append.execute(_append_sql(), params)
        nodes.execute(tree.APPEND_ONE_SQL, [entry.customer_id])
        pending.params.append(params)
        pending.appends.append(append)
        pending.nodes.append(nodes)
    return pending


# Any: the statement's parameters, one per column of the entry, of the column's type
def _append_params(entry: AuditEntry, template: Template, *, decisions: int) -> list[Any]:
    links = [template.head, template.middle, template.tail]
    params: list[Any] = [decisions, entry.logged_at, *links, entry.customer_id]
    for column in _ENTRY_INSERT_COLUMNS:
        value = getattr(entry, column)
        if column == "decision_id":
            decision = entry.decision
            known = value if decision is None or decision.pk is not None else None
            params += [
                known,
                entry.customer_id,
                None if known is not None or decision is None else decision.decision_id,
            ]
            continue
        is_json = column in _JSON_COLUMNS and value is not None  # a probe's None stays SQL NULL
        params.append(json.dumps(value, ensure_ascii=False) if is_json else value)
    return params + links


def _append_finish(pending: _PendingAppend) -> bool:
    """The sent appends' results: True when the tree was extended with them; False for a
    customer's first entries (no head row yet: it is created, the appends run again and the
    tree is left to chain_extended). A tree that lacked a subtree it needed is rebuilt here."""
    entries = pending.entries
    try:
        rows = [append.fetchone() for append in pending.appends]
        written: list[int] | None = [len(nodes.fetchall()) for nodes in pending.nodes]
        if rows[0] is None:  # the customer's first entry: create the head, then append
            _ensure_head(entries[0].customer_id)
            written, rows = None, []
            for append, params in zip(pending.appends, pending.params, strict=True):
                append.execute(_append_sql(), params)
                rows.append(append.fetchone())
    finally:
        for cursor in (*pending.appends, *pending.nodes):
            cursor.close()
    for entry, row in zip(entries, rows, strict=True):
        assert row is not None  # the head exists now
        entry.sequence, entry.hash, entry.previous_hash, entry.canonical, pending.followers = row
        entry._state.adding = False
        entry._state.db = connection.alias
    if written is None:
        return False
    if any(count != tree.leaf_nodes(e.sequence - 1) for e, count in zip(entries, written, strict=True)):
        # a subtree they merge was not stored
        if len(entries) == 1:
            tree.tree_append(
                entries[0].customer_id, entries[0].sequence - 1, [entries[0].hash], with_root=False
            )
        else:
            tree.tree_rebuild(entries[0].customer_id, entries[-1].sequence)
    return True
