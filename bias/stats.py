"""The incremental subgroup statistics store: what one decision contributes to the daily
statistics rows, the deltas of a change, their additive upsert, and the per-decision lock.

Every write that can change what a decision contributes (the decision being logged,
subgroups attached or replaced, a late outcome) first takes the per-decision lock (a
PostgreSQL transaction-level advisory lock on a slot of (customer, decision_id); SQLite serialises
writers anyway). Without it, POST /detect-bias and POST /log racing on the same decision_id
could each miss the other's uncommitted row and the subgroups would never be counted.

Besides the counts, each row keeps the stake weights of its decisions (docs/architecture.md,
Subgroup statistics), in integer units of 1e-12 so that a decision moved out of a row and back
leaves it exactly as it was.
"""

import datetime as dt
import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from types import EllipsisType
from typing import TYPE_CHECKING, NamedTuple

from django.db import connection

from bias.domain import normalize_value, subgroups_lenient
from bias.models import Correctness, SubgroupAttachment, SubgroupDailyStat
from config.db import prepared
from config.db.bulk import additive_upsert
from config.sqlparams import SQLValue

if TYPE_CHECKING:
    from audit.models import Decision

_LOCK_CLASS = 0x62696173  # "bias": the first key of the two-key advisory lock


@dataclass(frozen=True, order=True)
class StatKey:
    """The dimensions of one statistics row (without the customer)."""

    day: dt.date
    model_id: str
    model_version: str
    attribute: str
    group_value: str
    ai_value: str
    human_value: str
    category: str
    human_correct: int
    ai_correct: int

    def digest(self) -> str:
        parts = [
            self.day.isoformat(),
            self.model_id,
            self.model_version,
            self.attribute,
            self.group_value,
            self.ai_value,
            self.human_value,
            self.category,
            str(self.human_correct),
            str(self.ai_correct),
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class DecisionState(NamedTuple):
    """What one decision contributes per attribute, given its outcome and category (a tuple:
    a batch builds one per decision it counts)."""

    day: dt.date
    model_id: str
    model_version: str
    ai_value: str
    human_value: str
    category: str
    human_correct: int
    ai_correct: int
    confidence_micros: int | None
    weights: tuple[int, int, int, int]  # w_o, w_o^2, w_u, w_u^2 in PICO units (stake_weights)

    def key(self, attribute: str, group: str) -> StatKey:
        return StatKey(
            self.day,
            self.model_id,
            self.model_version,
            attribute,
            group,
            self.ai_value,
            self.human_value,
            self.category,
            self.human_correct,
            self.ai_correct,
        )


def correctness(value: str, outcome: str | None) -> int:
    return _correct(value, None if outcome is None else normalize_value(outcome))


def _correct(value: str, outcome: str | None) -> int:
    """correctness() of an outcome already normalised (None: none known)."""
    if not outcome:
        return Correctness.UNKNOWN
    return Correctness.CORRECT if value == outcome else Correctness.WRONG


PICO = 10**12  # the unit of the stored stake weights: 1e-12
NO_WEIGHT = (0, 0, 0, 0)


def stake_weights(confidence: float | None, ai_correct: int) -> tuple[int, int, int, int]:
    """(w_o, w_o^2, w_u, w_u^2) of one decision in PICO units, each rounded half to even
    (docs/architecture.md, Subgroup statistics): p = the confidence, w_o = max(0, 1 - 2p),
    w_u = max(0, 2p - 1); a decision without a confidence weighs nothing, whether or not its
    outcome is known (docs/reference/calibration.md, Notation). `ai_correct` is kept for the
    callers that pass it."""
    if confidence is None:
        return NO_WEIGHT
    p = float(confidence)
    wo, wu = max(0.0, 1 - 2 * p), max(0.0, 2 * p - 1)
    return round(wo * PICO), round(wo * wo * PICO), round(wu * PICO), round(wu * wu * PICO)


def decision_state(
    decision: "Decision",
    *,
    outcome: str | EllipsisType | None = ...,
    category: str | EllipsisType | None = ...,
) -> DecisionState:
    """The statistics state of a decision; `outcome`/`category` override the stored ones
    (a late outcome's previous state)."""
    outcome = decision.outcome if isinstance(outcome, EllipsisType) else outcome
    category = decision.calibration_category if isinstance(category, EllipsisType) else category
    ai_value = normalize_value(decision.ai_recommendation)
    human_value = normalize_value(decision.user_decision)
    timestamp = decision.timestamp
    if timestamp.utcoffset() is None:  # naive (django.utils.timezone.is_naive, inline)
        timestamp = timestamp.replace(tzinfo=dt.UTC)
    confidence = decision.ai_confidence
    truth = None if outcome is None else normalize_value(outcome)  # once for both correctnesses
    ai_correct = _correct(ai_value, truth)
    return DecisionState(  # by position, in field order: a batch builds one per decision
        timestamp.astimezone(dt.UTC).date(),
        decision.model_id or "",
        decision.model_version or "",
        ai_value,
        human_value,
        category or "CALIBRATED",
        _correct(human_value, truth),
        ai_correct,
        None if confidence is None else round(float(confidence) * 1_000_000),
        stake_weights(confidence, ai_correct),
    )


_ADDED = ("count", "confidence_count", "confidence_micros", "wo_pico", "wo_sq_pico", "wu_pico", "wu_sq_pico")


class Deltas:
    """Accumulated changes to statistics rows, the columns of _ADDED in order."""

    def __init__(self) -> None:
        self.rows: dict[StatKey, list[int]] = defaultdict(lambda: [0] * len(_ADDED))

    def add(self, state: DecisionState, attributes: dict[str, str], sign: int) -> None:
        for attribute, group in attributes.items():
            row = self.rows[state.key(attribute, group)]
            row[0] += sign
            if state.confidence_micros is not None:
                row[1] += sign
                row[2] += sign * state.confidence_micros
            for i, weight in enumerate(state.weights, start=3):
                row[i] += sign * weight


_STAT_VALUES = (
    "day",
    "model_id",
    "model_version",
    "attribute",
    "group_value",
    "ai_value",
    "human_value",
    "category",
    "human_correct",
    "ai_correct",
    *_ADDED,
)


def upsert_stats(customer_id: str, deltas: Deltas) -> None:
    """Add the deltas to the statistics rows (one additive upsert per 500 rows), keyed by the
    digest of the dimensions so that the unique index stays small."""
    additive_upsert(
        SubgroupDailyStat,
        key=("customer_id", "key_hash"),
        values=_STAT_VALUES,
        add=_ADDED,
        rows=(
            (
                customer_id,
                k.digest(),
                k.day,
                k.model_id,
                k.model_version,
                k.attribute,
                k.group_value,
                k.ai_value,
                k.human_value,
                k.category,
                k.human_correct,
                k.ai_correct,
                *counts,
            )
            for k, counts in deltas.rows.items()
            if any(counts)
        ),
    )


# The lock is one of LOCK_SLOTS per lock class, chosen by a hash of (customer, decision_id):
# the same decision always maps to the same slot, so two writes of one decision still
# serialise (two unrelated decisions sharing a slot only wait for each other). A lock per
# decision_id made a 1,000-item batch hold 1,000 locks until commit; PostgreSQL's shared lock
# table holds max_locks_per_transaction x max_connections (6,400 by default) for everyone,
# and a few concurrent batches ran it out ("out of shared memory"). Now at most LOCK_SLOTS.
LOCK_SLOTS = 1024

_LOCK_ONE_SQL = "SELECT pg_advisory_xact_lock(%s, hashtext(%s || chr(31) || %s) & %s)"
_LOCK_MANY_SQL = (
    "SELECT count(pg_advisory_xact_lock(%s, slot)) FROM (SELECT DISTINCT hashtext(%s || chr(31) || d) & %s"
    " AS slot FROM unnest(%s::text[]) AS d ORDER BY slot) AS slots"
)


def lock_decision(customer_id: str, decision_id: str) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_ONE_SQL, [_LOCK_CLASS, customer_id, decision_id, LOCK_SLOTS - 1])


def _lock_many_params(customer_id: str, decision_ids: list[str]) -> list[SQLValue]:
    return [_LOCK_CLASS, customer_id, LOCK_SLOTS - 1, list(decision_ids)]


def lock_decisions(customer_id: str, decision_ids: list[str]) -> None:
    """lock_decision for many decisions in one statement, slots in ascending order (two
    writers take their common slots in the same order, so they never deadlock)."""
    if connection.vendor == "postgresql" and decision_ids:
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_MANY_SQL, _lock_many_params(customer_id, decision_ids))


_ATTACHMENTS_SQL = (
    f"SELECT id, decision_id, attributes, counted FROM {SubgroupAttachment._meta.db_table} "  # noqa: S608
    "WHERE customer_id = %s AND decision_id = ANY(%s)"
)
_ATTACHMENT_FIELDS = ["id", "decision_id", "attributes", "counted"]


def attachments_locked(customer_id: str, decision_ids: list[str]) -> dict[str, SubgroupAttachment]:
    """Take the per-decision lock of every decision (lock_decisions), then read their
    attachments, by decision_id (the rows as `.only("id", "decision_id", "attributes",
    "counted")` gives them).

    On PostgreSQL both statements go in one round trip (psycopg's pipeline mode): the
    server still runs them one after the other, and the read, a statement of its own,
    takes its snapshot once the lock is held (a single statement would read with the
    snapshot it took before waiting for the lock, and miss what the lock's holder committed)."""
    if not decision_ids:
        return {}
    if connection.vendor != "postgresql":
        found: dict[str, SubgroupAttachment] = {}
        for start in range(0, len(decision_ids), 900):  # SQLite's bound-parameter limit
            for row in SubgroupAttachment.objects.filter(
                customer_id=customer_id, decision_id__in=decision_ids[start : start + 900]
            ).only(*_ATTACHMENT_FIELDS):
                found[row.decision_id] = row
        return found
    # Errors raised when the pipeline ends are Django's, as any statement's (a lost connection is
    # an OperationalError the group commit recognises, not psycopg's own).
    with connection.wrap_database_errors, connection.connection.pipeline():
        rows = attachments_locked_sent(customer_id, decision_ids)
    # Read once the pipeline is left: its Sync collects both results in one wait (a fetch inside
    # the block would first wait on a Flush, then the exit on the Sync: two).
    return rows()


def attachments_locked_sent(
    customer_id: str, decision_ids: list[str]
) -> Callable[[], dict[str, SubgroupAttachment]]:
    """attachments_locked in two steps on PostgreSQL: the lock and the read are sent now (in the
    caller's pipeline, if any: the write of a plan that guessed them empty, audit.pipeline), and
    the function returned reads the rows, once the pipeline is left."""
    lock, read = prepared.cursor(), prepared.cursor()
    lock.execute(_LOCK_MANY_SQL, _lock_many_params(customer_id, decision_ids))
    read.execute(_ATTACHMENTS_SQL, [customer_id, list(decision_ids)])

    def rows() -> dict[str, SubgroupAttachment]:
        try:
            fetched = read.fetchall()
        finally:
            lock.close()
            read.close()
        found = {}
        for pk, decision_id, value, counted in fetched:
            value = json.loads(value) if isinstance(value, str | bytes) else value  # jsonb arrives as text
            found[decision_id] = SubgroupAttachment.from_db(
                connection.alias, _ATTACHMENT_FIELDS, (pk, decision_id, value, counted)
            )
        return found

    return rows


def attachment_get(customer_id: str, decision_id: str) -> SubgroupAttachment | None:
    """The decision's attachment row, if any (unique lookup, no ORDER BY)."""
    rows = SubgroupAttachment.objects.filter(customer_id=customer_id, decision_id=decision_id).only(
        "id", "attributes", "counted"
    )[:1]
    return next(iter(rows), None)


def counted_attributes(decision: "Decision", attachment: SubgroupAttachment | None) -> dict[str, str]:
    """The attributes a logged decision is counted under: its attachment's once one was
    made through POST /detect-bias, else the subgroups it was logged with. (A decision
    logged with subgroups gets no attachment row: one insert less on POST /log.)"""
    if attachment is not None and attachment.counted:
        return dict(attachment.attributes)
    return subgroups_lenient(decision.subgroups)
