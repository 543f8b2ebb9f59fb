"""The aggregates other apps keep from decisions, reached through one small registered
interface so that audit imports none of those apps: each app with a `contributions` module
registers a Contributor there (found through Django's app registry, as config.engines finds
the apps' `engine` modules), and the decision pipeline calls every registered one.

A contributor's life in one write of the pipeline (see docs/reference/decisions.md,
"Order of effects"):
  load(customer_id, decision_ids)   database, in the transaction, before planning: lock and
                                    read the contributor's own stored rows the items touch;
  start(customer, loaded)           pure: a fresh accumulator of deltas;
  add(acc, change) -> events        pure, once per change in plan order: fold the change's
                                    deltas, return the events it causes (type, data);
  trail(acc, change) -> entries     pure, right after add(): the audit entries the change
                                    causes besides its own (TrailEntry), appended after it;
  apply(customer_id, acc, setwise)  database, after the decision rows are written and before
                                    the chain head is locked: write the deltas; `setwise` (a
                                    large write on PostgreSQL, audit.apply) sends the changes
                                    with a statement that derives the rows from them in SQL,
                                    else they are folded in Python and written by one upsert;
                                    either way in psycopg's pipeline mode on PostgreSQL: no
                                    COPY, no read of a result.
  appended(customer, acc, entries)  database, after the write's entries are appended, under the
                                    chain head's lock: records that follow them on the chain;
                                    only when the head counts `followers` (a contributor that
                                    keeps such records counts them, audit.services.chain_followers_set).
"""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from django.apps import apps
from django.utils.module_loading import autodiscover_modules

from config.jsondoc import JSONObject

if TYPE_CHECKING:
    from audit.models import AuditEntry, Decision
    from keys.models import Customer

# an event's type and its data, JSON by name (docs/reference/events.md)
Event = tuple[str, JSONObject]


class Change(NamedTuple):
    """One change a plan makes to a decision: `kind` "new" (logged) or "outcome" (a later
    ground truth moved its outcome, and maybe its category, from the previous values).
    `decision` is the row as this change leaves it; a later item of the same plan may change
    it again, so a contributor takes what it needs during add()."""

    kind: Literal["new", "outcome"]
    decision: "Decision"
    entry_id: str
    source: str
    previous_outcome: str | None = None
    previous_category: str | None = None


@dataclass(frozen=True)
class TrailEntry:
    """An entry a contributor's part of a change adds to the audit trail, right after the
    change's own entry: its type, and the snapshot fields that differ from the decision's."""

    type: str
    fields: JSONObject


class Contributor[Loaded, Acc]:
    """The interface; subclass it in the app's `contributions` module and register() it.
    `Loaded`: what load() reads (None when nothing); `Acc`: the accumulator start() makes."""

    name = ""

    def load(self, *, customer_id: str, decision_ids: Sequence[str]) -> Loaded | None:
        return None

    def load_sent(self, *, customer_id: str, decision_ids: Sequence[str]) -> Callable[[], Loaded | None]:
        """load() in two steps, for a write of new decisions planned on the guess that every
        load finds nothing (audit.pipeline): its statements sent now, first in the write's
        pipeline, and the function returned gives what load() would have, once the pipeline
        is left. A contributor that overrides load() overrides this too."""
        return lambda: None

    def start(self, *, customer: "Customer", loaded: Loaded | None) -> Acc:
        raise NotImplementedError

    def add(self, acc: Acc, change: Change) -> list[Event]:
        raise NotImplementedError

    def trail(self, acc: Acc, change: Change) -> list[TrailEntry]:
        return []

    def apply(self, *, customer_id: str, acc: Acc, setwise: bool) -> None:
        raise NotImplementedError

    def appended(self, *, customer: "Customer", acc: Acc, entries: Sequence["AuditEntry"]) -> None:
        """Database, last in the write: the write's entries are on the chain (their sequences
        set) and the chain head is locked until commit. A contributor whose records follow
        all of the write's entries (the drift charts' points, alarms and their own entries)
        writes them here."""
        return None


# Any: each registered contributor has loaded rows and an accumulator of its own types; the
# pipeline only hands them back to the contributor that made them.
AnyContributor = Contributor[Any, Any]

_registered: dict[str, AnyContributor] = {}
_ordered: list[tuple[AnyContributor, ...]] = []


def register[C: AnyContributor](contributor: C) -> C:
    """Called at import of an app's `contributions` module (registering again replaces)."""
    _registered[contributor.name] = contributor
    _ordered.clear()
    return contributor


@lru_cache(maxsize=1)
def _discovered() -> bool:
    autodiscover_modules("contributions")
    return True


def contributors() -> tuple[AnyContributor, ...]:
    """Every registered contributor, in INSTALLED_APPS order (the order their rows are locked
    and written: the same in every writer, so writers never deadlock on them)."""
    _discovered()
    if not _ordered:
        order = {f"{app.name}.contributions": i for i, app in enumerate(apps.get_app_configs())}
        _ordered.append(
            tuple(sorted(_registered.values(), key=lambda c: order.get(type(c).__module__, len(order))))
        )
    return _ordered[0]


def contributes(change: Change) -> bool:
    """Whether a change reaches the aggregates at all: the one place for a rule that keeps a
    kind of decision out of every contributor's figures (its entries are still written).
    Vigilance probes test the reviewer and describe no real decision: no calibration aggregate
    or subgroup statistic counts them, and they never fire trust.miscalibrated
    (docs/reference/oversight.md, What a probe is left out of)."""
    return change.decision.probe_kind is None


@dataclass(frozen=True)
class Erased:
    """What an erasure reached (docs/reference/erasure.md), handed to every registered eraser:
    the customer, the erased user_id and its pseudonym (both None when a subject was erased:
    the reviewer is not the person erased then), the time span of the decisions whose
    entries lost their personal part (None when none did: a reviewer's erasure runs the
    erasers whatever is already erased), and the `decision_id`s of the subject's decisions when
    a subject was erased (empty when a reviewer was: the subject's data stays theirs)."""

    customer_id: str
    user_id: str | None
    pseudonym: str | None
    first_timestamp: dt.datetime | None
    last_timestamp: dt.datetime | None
    subject_decisions: tuple[str, ...] = ()


# An eraser may return how many rows it changed (None counts as none): an erasure that changed
# nothing anywhere named nobody and appends no entry.
Eraser = Callable[[Erased], int | None]
_erasers: list[Eraser] = []


def register_eraser(fn: Eraser) -> Eraser:
    """Register `fn(erased: Erased) -> int | None`, run inside the erasure's transaction: it
    re-keys (or deletes) whatever the app keeps that names the erased person, and may return the
    rows it changed. It locks rows in the order the app's writers lock them (the writers' order,
    audit/erasure_run.py). Called at import of the app's `contributions` module."""
    if fn not in _erasers:
        _erasers.append(fn)
    return fn


def erasers() -> list[Eraser]:
    _discovered()
    return list(_erasers)
