"""The planning step of the decision pipeline: validated items plus the stored rows they touch
-> every effect, as plain data, with no database access. The rules of a decision write
(replay, conflict, late outcome, order of effects; docs/reference/decisions.md) are written
here and only here; one POST /log is a plan of one item, a batch a plan of many, a group of
concurrent requests a plan of their items in arrival order.

The effects: the new decision rows, the stored rows whose outcome changed, the audit entries
(snapshots taken when their item is planned), the events, and each registered contributor's
accumulated deltas. link() gives the entries their sequence and hashes once the chain head
is known (the applier calls it with the head it has locked)."""

import copy
import datetime as dt
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from audit import registry
from audit.chain import entries_seal
from audit.exceptions import DecisionNotFound
from audit.fields import SNAPSHOT_FIELDS
from audit.inputs import Item, LateOutcomeInput
from audit.models import AuditEntry, Decision
from audit.records import (
    columns,
    decision_conflict,
    new_decision,
    outcome_apply,
    payload_fingerprint,
    probe_events,
    probe_outcome_conflict,
)
from config.exceptions import DomainError
from config.jsonwalk import is_clean_text
from config.unsaved import unsaved
from keys.models import Customer


@dataclass
class Stored:
    """The stored rows a plan's items touch, read (and locked) by the pipeline beforehand."""

    decisions: dict[str, Decision] = field(default_factory=dict)  # by decision_id
    decision_entries: dict[str, AuditEntry] = field(default_factory=dict)  # a stored decision's entry
    last_outcomes: dict[str, AuditEntry] = field(default_factory=dict)  # its latest outcome entry
    # Any: by contributor name, what its load() read, of that contributor's own type
    loaded: dict[str, Any] = field(default_factory=dict)


@dataclass
class ItemResult:
    """One item's result: status 201 (stored) or 200 (replayed) with its `entry` (and, for a
    decision item, its `decision`), or the DomainError of a rejected item (400, 404, 409)."""

    index: int
    status: int
    decision_id: str | None
    entry: AuditEntry | None = None
    error: DomainError | None = None
    decision: Decision | None = None


@dataclass
class Plan:
    results: list[ItemResult]
    new_decisions: list[Decision]
    changed: list[Decision]  # stored decisions whose outcome (and category) a later ground truth moved
    entries: list[AuditEntry]  # in chain order, not yet linked
    events: list[registry.Event]
    # Any: each contributor with its accumulator, of that contributor's own type
    contributions: list[tuple[registry.AnyContributor, Any]]


def raw_decision_id(body: object) -> str | None:
    """A rejected item's decision_id as sent, when it can be shown (a string that can be
    encoded: an unpaired surrogate could not be written into the answer)."""
    value = body.get("decision_id") if isinstance(body, dict) else None
    return value if isinstance(value, str) and is_clean_text(value) else None


_snapshot = operator.itemgetter(*SNAPSHOT_FIELDS)


def new_entry(
    *, customer_id: str, decision: Decision, type: str, logged_at: dt.datetime, entry_id: str
) -> AuditEntry:
    """An entry snapshotting the decision as it is now (not linked, not saved)."""
    row = decision.__dict__  # a loaded or planned row holds every column here
    try:  # the fields taken in one call (a comprehension looked each up twice)
        values = dict(zip(SNAPSHOT_FIELDS, _snapshot(row), strict=True))
    except KeyError:  # a row loaded with deferred fields
        values = {name: row[name] if name in row else getattr(decision, name) for name in SNAPSHOT_FIELDS}
    values.update(
        id=entry_id,
        customer_id=customer_id,
        decision_id=decision.pk,
        type=type,
        decision_ref=decision.decision_id,
        logged_at=logged_at,
    )
    return unsaved(AuditEntry, values, related={"decision": decision})


def plan_items(
    *,
    customer: Customer,
    items: Sequence[Item | DomainError],
    bodies: Sequence[object],
    stored: Stored,
    now: dt.datetime,
    sources: Sequence[str],
    new_entry_id: Callable[[], str],
) -> Plan:
    """Every item in order, with exactly the effects of the same POST /log calls one by one:
    an item naming a decision logged earlier (stored, or by an earlier item of the plan) is a
    replay when its payload is the same and a conflict otherwise; a later ground truth
    appends an `outcome` entry, unless it repeats the outcome its decision's latest outcome
    entry recorded (a replay of that entry); an unknown decision is a 404."""
    known: dict[str, Decision] = dict(stored.decisions)
    first_entry: dict[str, AuditEntry] = {}  # decision_id -> its decision entry, new in this plan
    last_outcome: dict[str, AuditEntry] = {}  # decision_id -> its latest outcome entry in this plan
    changed: dict[str, Decision] = {}
    plan = Plan([], [], [], [], [], [])
    contributors = registry.contributors()
    accs = [c.start(customer=customer, loaded=stored.loaded.get(c.name)) for c in contributors]
    plan.contributions = list(zip(contributors, accs, strict=True))
    hooks = _hooks(plan.contributions)

    def entry_for(decision: Decision, type: str) -> AuditEntry:
        entry = new_entry(
            customer_id=customer.pk, decision=decision, type=type, logged_at=now, entry_id=new_entry_id()
        )
        plan.entries.append(entry)
        return entry

    def record(change: registry.Change) -> None:
        if registry.contributes(change):
            _contributed(change, hooks, plan.events, entry_for)

    for index, item in enumerate(items):
        if isinstance(item, DomainError):
            plan.results.append(ItemResult(index, item.status, raw_decision_id(bodies[index]), error=item))
            continue
        data = item.data
        decision_id: str = data.decision_id or ""
        if isinstance(data, LateOutcomeInput):
            decision = known.get(decision_id)
            if decision is None:
                error = DecisionNotFound(f"No decision '{decision_id}'.")
                plan.results.append(ItemResult(index, 404, decision_id, error=error))
                continue
            conflict = probe_outcome_conflict(decision)  # a probe's outcome is fixed
            if conflict is not None:
                plan.results.append(ItemResult(index, 409, decision_id, error=conflict))
                continue
            if decision.outcome == data.outcome:
                last = last_outcome.get(decision_id)
                if last is None and decision_id not in first_entry:
                    last = stored.last_outcomes.get(decision_id)
                if last is not None and last.outcome == data.outcome:
                    plan.results.append(ItemResult(index, 200, decision_id, entry=last))
                    continue
            if decision_id not in first_entry and decision_id not in changed:
                # a stored row: the plan changes a copy of its own, never the caller's object
                decision = known[decision_id] = copy.copy(decision)
            previous_outcome, previous_category = outcome_apply(decision, data.outcome)
            entry = entry_for(decision, AuditEntry.Type.OUTCOME)
            record(
                registry.Change(
                    "outcome",
                    decision,
                    entry.id,
                    "outcome",
                    previous_outcome=previous_outcome,
                    previous_category=previous_category,
                )
            )
            last_outcome[decision_id] = entry
            if decision_id not in first_entry:
                changed[decision_id] = decision
            plan.results.append(ItemResult(index, 201, decision_id, entry=entry))
            continue
        values = columns(data)  # once per item: the fingerprint's and the new row's
        fingerprint = payload_fingerprint(data, values)
        if decision_id and decision_id in known:
            decision = known[decision_id]
            if decision.payload_fingerprint != fingerprint:
                plan.results.append(ItemResult(index, 409, decision_id, error=decision_conflict(decision_id)))
                continue
            entry_of = first_entry.get(decision_id) or stored.decision_entries.get(decision_id)
            plan.results.append(ItemResult(index, 200, decision_id, entry=entry_of, decision=decision))
            continue
        decision = new_decision(customer=customer, data=data, fingerprint=fingerprint, now=now, values=values)
        entry = entry_for(decision, AuditEntry.Type.DECISION)
        record(registry.Change("new", decision, entry.id, sources[index]))
        plan.events.extend(probe_events(decision))
        known[decision.decision_id] = decision
        first_entry[decision.decision_id] = entry
        plan.new_decisions.append(decision)
        plan.results.append(ItemResult(index, 201, decision.decision_id, entry=entry, decision=decision))
    plan.changed = list(changed.values())
    return plan


# Any: each contributor's accumulator, of its own type
type _Hook = tuple[
    Callable[[Any, registry.Change], list[registry.Event]],
    Callable[[Any, registry.Change], list[registry.TrailEntry]] | None,
    Any,
]


# Any: each contributor's accumulator, of its own type
def _hooks(contributions: Sequence[tuple[registry.AnyContributor, Any]]) -> list[_Hook]:
    """Each contributor's bound add() and, when it has its own, trail(), with its accumulator:
    looked up once per plan, not per change (the interface's trail() adds nothing)."""
    return [
        (c.add, c.trail if type(c).trail is not registry.Contributor.trail else None, acc)
        for c, acc in contributions
    ]


def _contributed(
    change: registry.Change,
    hooks: Sequence[_Hook],
    events: list[registry.Event],
    entry_for: Callable[[Decision, str], AuditEntry],
) -> None:
    """The change through every contributor in order: its events, and its extra entries
    right after the change's own."""
    for add, trail, acc in hooks:
        caused = add(acc, change)
        if caused:
            events.extend(caused)
        if trail is None:
            continue
        for extra in trail(acc, change):
            entry = entry_for(change.decision, extra.type)
            for name, value in extra.fields.items():
                setattr(entry, name, value)


def link(entries: Sequence[AuditEntry], *, sequence: int, head_hash: str) -> tuple[int, str]:
    """Give the entries, in order, the sequences after `sequence`, their canonical texts and
    hashes (sealed first, audit.chain.entry_seal, unless they were); returns the new head
    (sequence, hash)."""
    for entry, template in zip(entries, entries_seal(entries), strict=True):
        sequence += 1
        entry.sequence, entry.previous_hash = sequence, head_hash
        entry.canonical, entry.hash = template.link(head_hash, sequence)
        head_hash = entry.hash
    return sequence, head_hash
