"""The decision pipeline, one for every door (POST /log, POST /calibrate, POST /log/batch,
import_decisions): validate each item (audit.inputs.item_validated), read and lock the
stored rows the items touch (here), plan the effects (audit.plan, pure), apply them
set-wise (audit.apply), all in one transaction."""

import datetime as dt
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from audit import registry
from audit.apply import LoadsFoundRows, plan_apply
from audit.inputs import Item
from audit.models import AuditEntry, Decision
from audit.plan import ItemResult, Stored, plan_items
from audit.records import ms
from config.db.bulk import array_param
from config.exceptions import DomainError
from keys.models import Customer

_CHUNK = 900  # SQLite's bound-parameter limit


def _chunks[T](values: list[T]) -> Iterator[list[T]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


# The decisions of the items, locked in key order as every writer locks them (the table's name
# is the model's, no input). A join against the unnested ids, which leaves the planner two plans
# that each read a stored decision at most once, whatever the statistics: the unique index's
# probes, or one pass over the customer's decisions into a hash. `decision_id = ANY(ids)` scanned
# the customer's decisions where its statistics priced the probes higher (tens of thousands
# analysed, about 30 ms a batch); a lookup per id cannot be turned into a pass, and on a table
# never analysed it scanned the customer's decisions once per id (docs/architecture.md, "The
# set-wise batch path").
_DECISIONS_LOCKED = (
    f"SELECT d.* FROM {Decision._meta.db_table} AS d JOIN unnest(%s::text[]) AS wanted(decision_id) "  # noqa: S608
    "ON d.customer_id = %s AND d.decision_id = wanted.decision_id ORDER BY d.id FOR UPDATE OF d"
)


def stored_load(
    customer: Customer, items: Sequence[Item | DomainError], *, optimistic: bool = False
) -> Stored:
    """The stored rows the items touch: the decisions they name (locked FOR UPDATE, in one
    query), the decision entries of those a decision item may replay, the latest outcome
    entries of those an outcome item may repeat.

    `optimistic` reads only the decisions that outcome items name and takes every decision
    item for a new decision: if one is in fact stored, its insert meets the unique constraint
    and the write runs again with everything read (items_write). A new decision, the usual
    single request, so costs no read."""
    valid = [item for item in items if isinstance(item, Item)]
    ids = sorted(
        {
            item.data.decision_id
            for item in valid
            if item.data.decision_id and not (optimistic and item.kind == "decision")
        }
    )
    stored = Stored()
    if not ids:
        return stored
    if connection.vendor == "postgresql":
        # One array parameter, in one statement: the ORM's IN list prepared every id on its
        # own (a sixth of the read's CPU for 1,000 ids) and SQLite's limit split it in two.
        locked = Decision.objects.raw(_DECISIONS_LOCKED, [array_param(ids), customer.pk])
        stored.decisions.update({d.decision_id: d for d in locked})
    else:
        for chunk in _chunks(ids):
            rows = Decision.objects.select_for_update().filter(customer=customer, decision_id__in=chunk)
            stored.decisions.update({d.decision_id: d for d in rows.order_by("pk")})
    known = stored.decisions
    replayed = {
        known[i.data.decision_id] for i in valid if i.kind == "decision" and i.data.decision_id in known
    }
    repeated = {
        known[i.data.decision_id]
        for i in valid
        if i.kind == "outcome"
        and i.data.decision_id in known
        and known[i.data.decision_id].outcome == i.data.outcome
    }
    # the lowest sequence's decision entry, the highest sequence's outcome entry
    stored.decision_entries = _entries_of(customer, replayed, AuditEntry.Type.DECISION, "-sequence")
    stored.last_outcomes = _entries_of(customer, repeated, AuditEntry.Type.OUTCOME, "sequence")
    return stored


def _entries_of(customer: Customer, decisions: set[Decision], type: str, order: str) -> dict[str, AuditEntry]:
    """By decision_id, the last of the decisions' entries of `type` in `order`. Read by the
    entries' (customer, decision_ref, sequence) index, which GET /audit-trail's decision filter
    uses too: a decision's and an outcome's entry name their decision's decision_id in
    decision_ref."""
    out: dict[str, AuditEntry] = {}
    for chunk in _chunks(sorted(d.decision_id for d in decisions)):
        rows = AuditEntry.objects.filter(customer=customer, decision_ref__in=chunk, type=type)
        for entry in rows.order_by(order):
            out[entry.decision_ref] = entry
    return out


# Any: each contributor's own loaded rows, handed back to it alone
def _contributors_load(customer: Customer, items: Sequence[Item | DomainError]) -> dict[str, Any]:
    """Each contributor's rows for the decisions the items name, by contributor name. A
    generated decision_id is new by construction, so only ids the client gave are passed."""
    ids = _decision_ids(items)
    return {c.name: c.load(customer_id=customer.pk, decision_ids=ids) for c in registry.contributors()}


def _decision_ids(items: Sequence[Item | DomainError]) -> list[str]:
    return sorted({i.data.decision_id for i in items if isinstance(i, Item) and i.data.decision_id})


def items_write(
    *,
    customer: Customer,
    items: Sequence[Item | DomainError],
    bodies: Sequence[object],
    sources: Sequence[str],
    optimistic: bool = False,
    at: dt.datetime | None = None,
) -> list[ItemResult]:
    """Plan and apply the items in one transaction; every result in input order. `at`: the
    write's time when not now (decisions_log_batch).

    A concurrent writer of the same new decision_id meets the unique constraint (as does a
    stored decision that an `optimistic` write did not read, see stored_load); the whole write
    then runs once more, reading everything, and the item becomes a replay or a conflict of
    that decision."""
    try:
        return _write_once(
            customer=customer, items=items, bodies=bodies, sources=sources, optimistic=optimistic, at=at
        )
    except (IntegrityError, LoadsFoundRows):
        return _write_once(customer=customer, items=items, bodies=bodies, sources=sources, at=at)


def _loads_guessed(items: Sequence[Item | DomainError]) -> bool:
    """An optimistic write of new decisions only on PostgreSQL plans on the guess that every
    contributor's load finds nothing (no subgroups attached beforehand, the usual case): the
    loads' statements (the per-decision locks and the attachments' read) are then sent first in
    the write's own pipeline instead of a round trip of their own, and when they did find rows
    the write is rolled back and runs again, loading first (audit.apply.LoadsFoundRows)."""
    return connection.vendor == "postgresql" and all(
        isinstance(item, Item) and item.kind == "decision" for item in items
    )


def _write_once(
    *,
    customer: Customer,
    items: Sequence[Item | DomainError],
    bodies: Sequence[object],
    sources: Sequence[str],
    optimistic: bool = False,
    at: dt.datetime | None = None,
) -> list[ItemResult]:
    now = ms(at or timezone.now())
    new_entry_id = AuditEntry._meta.get_field("id").get_default
    with transaction.atomic():
        # The contributors' loads come first: the bias contributor takes the per-decision locks
        # (bias.stats), and every writer takes them before any decision row lock. POST
        # /detect-bias holds the lock of its decision while its audit entry's reference takes a
        # share lock on that decision's row; a write that locked the row FOR UPDATE first and
        # then waited for the decision lock deadlocked with it.
        guessed = optimistic and _loads_guessed(items)
        loaded = {} if guessed else _contributors_load(customer, items)
        stored = stored_load(customer, items, optimistic=optimistic)
        stored.loaded.update(loaded)
        plan = plan_items(
            customer=customer,
            items=items,
            bodies=bodies,
            stored=stored,
            now=now,
            sources=sources,
            new_entry_id=new_entry_id,
        )
        followers = plan_apply(
            plan, customer=customer, loads_guessed=_decision_ids(items) if guessed else None
        )
        # Records that follow the write's entries, when the chain head counts any (its
        # `followers`, read by the append): a customer without drift monitors reads none.
        if followers:
            for contributor, acc in plan.contributions:
                contributor.appended(customer=customer, acc=acc, entries=plan.entries)
    return plan.results
