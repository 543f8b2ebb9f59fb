"""Writes for decisions and the audit trail (docs/reference/decisions.md): the doors of the one decision pipeline
(audit.pipeline). POST /log is a plan of one item; POST /calibrate the same with its own
source; POST /log/batch and import_decisions a plan of many. The rules live in audit.plan."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from audit.apply import entries_append
from audit.fields import DECISION_FIELDS
from audit.group import GroupCommit
from audit.inputs import (
    BATCH_MAX,
    DecisionInput,
    Item,
    LateOutcomeInput,
    decision_items,
    decisions_at_once,
    item_validated,
)
from audit.models import AuditEntry, ChainHead, Decision
from audit.own_entries import chain_lock, own_entry
from audit.pipeline import items_write
from audit.plan import ItemResult, new_entry
from audit.records import payload_fingerprint
from audit.settings_trail import FAVOURABLE_VALUES, settings_changed_append, thresholds_recorded
from config.exceptions import DomainError
from config.jsondoc import JSONObject
from keys.models import Customer

__all__ = [
    "BATCH_MAX",
    "DECISION_FIELDS",
    "FAVOURABLE_VALUES",
    "BatchResult",
    "ItemResult",
    "LogResult",
    "chain_followers_set",
    "chain_lock",
    "decision_log",
    "decision_outcome_record",
    "decisions_log_batch",
    "payload_fingerprint",
    "settings_changed_append",
    "subgroups_attached_record",
    "thresholds_recorded",
    "trail_entries_append",
    "trail_entry",
]


@dataclass(frozen=True)
class LogResult:
    decision: Decision
    entry: AuditEntry
    created: bool


@dataclass
class BatchResult:
    items: list[ItemResult]

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


# Concurrent single writes of one customer in this process commit together (audit.group).
# Single requests are written optimistically (a new decision reads nothing first; a replay
# costs one more attempt, audit.pipeline.stored_load).
group_commit = GroupCommit(partial(items_write, optimistic=True))


def _one(*, customer: Customer, item: Item, source: str) -> ItemResult:
    result = group_commit.write(customer=customer, item=item, source=source)
    if result.error is not None:
        raise result.error
    return result


def decision_log(*, customer: Customer, data: DecisionInput, source: str = "log") -> LogResult:
    """Record one validated decision (POST /log, POST /calibrate): a plan of one. A known
    decision_id with the same payload is a replay (created=False); with another payload,
    DECISION_CONFLICT."""
    result = _one(customer=customer, item=Item("decision", data), source=source)
    assert result.decision is not None and result.entry is not None
    return LogResult(result.decision, result.entry, created=result.status == 201)


def decision_outcome_record(*, customer: Customer, decision_id: str, outcome: str) -> tuple[AuditEntry, bool]:
    """A later ground truth: append an `outcome` entry and update the decision. The same
    outcome sent again answers the entry that recorded it (created=False)."""
    item = Item("outcome", LateOutcomeInput(decision_id=decision_id, outcome=outcome))
    result = _one(customer=customer, item=item, source="log")
    assert result.entry is not None
    return result.entry, result.status == 201


def items_validated(items: Sequence[object]) -> list[Item | DomainError]:
    """Each POST /log body of a batch validated alone: its item, or the error that rejects it."""
    at_once = decisions_at_once(items)
    if set(map(type, at_once)) == {DecisionInput}:  # every item a decision the model took
        return list(decision_items(at_once))
    validated: list[Item | DomainError] = []
    keep = validated.append
    for body, done in zip(items, at_once, strict=True):
        if type(done) is DecisionInput:
            keep(Item("decision", done))
            continue
        try:
            keep(item_validated(body, strings_checked=False))
        except DomainError as exc:
            keep(exc)
    return validated


def decisions_log_batch(
    *, customer: Customer, items: Sequence[object], source: str = "log", at: dt.datetime | None = None
) -> BatchResult:
    """Many POST /log bodies with exactly the effects of the same calls in order, in one
    plan: every valid item is committed together; an invalid one is reported and stores
    nothing. `at` backdates the write (its entries' logged_at and what the drift charts raise
    in it: seed_demo's history, not reachable from the API); it must not precede the chain's
    latest entry (docs/reference/drift.md, Processing in the write)."""
    validated = items_validated(items)
    results = items_write(
        customer=customer, items=validated, bodies=items, sources=[source] * len(items), at=at
    )
    return BatchResult(results)


# the subgroups object of the API, nested JSON
def subgroups_attached_record(
    *, customer: Customer, decision: Decision, subgroups: JSONObject, at: dt.datetime
) -> AuditEntry:
    """Append a `subgroups_attached` entry to the customer's chain (docs/reference/decisions.md, The
    audit trail): the decision as it is now, with the subgroups attached to it (the caller's
    transaction holds the decision's lock). Through the one append path of every entry."""
    entry = new_entry(
        customer_id=customer.pk,
        decision=decision,
        type=AuditEntry.Type.SUBGROUPS_ATTACHED,
        logged_at=at,
        entry_id=AuditEntry._meta.get_field("id").get_default(),
    )
    entry.subgroups = subgroups
    entries_append(customer.pk, [entry], decisions=0)
    return entry


def chain_followers_set(customer_id: str, followers: int) -> None:
    """Store on the customer's chain head how many records follow its chain after each write
    (the enabled drift monitors), in the transaction that changed them, holding the head's lock
    (chain_lock). A write whose head counts none skips their read (audit.pipeline)."""
    ChainHead.objects.filter(customer_id=customer_id).update(followers=followers)


# an entry's fields by name, JSON values of several types
def trail_entry(
    *,
    customer_id: str,
    type: str,
    ref: str,
    at: dt.datetime,
    clear: JSONObject,
    user_id: str | None = None,
    context: str | None = None,
) -> AuditEntry:
    """A sealed, unsaved format-2 entry that records no decision (another app's record, e.g. a
    drift monitor's): `clear` its fields shown in clear (besides entry_id, type and logged_at,
    added here), with a personal part committing to `user_id` and `context`
    (docs/reference/erasure.md, "Entry format 2"); `ref` is stored as its decision_ref."""
    return own_entry(
        customer_id=customer_id,
        type=type,
        ref=ref,
        at=at,
        fields=clear,
        user_id=user_id,
        context=context,
        personal=True,
    )


def trail_entries_append(customer_id: str, entries: list[AuditEntry]) -> None:
    """Append trail_entry() entries, in order, to the customer's chain (sequences set on them)."""
    if entries:
        entries_append(customer_id, entries, decisions=0)
