"""The incremental subgroup statistics store: what one decision contributes to the daily
statistics rows, the deltas of a change, their additive upsert, and the per-decision lock.

Every write that can change what a decision contributes (the decision being logged,
subgroups attached or replaced, a late outcome) first takes the per-decision lock (a
PostgreSQL transaction-level advisory lock on (customer, decision_id); SQLite serialises
writers anyway). Without it, POST /detect-bias and POST /log racing on the same decision_id
could each miss the other's uncommitted row and the subgroups would never be counted.
"""

import datetime as dt
import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import connection
from django.utils import timezone

from bias.domain import normalize_value, subgroups_lenient
from bias.models import Correctness, SubgroupAttachment, SubgroupDailyStat
from config.bulk import additive_upsert

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


@dataclass(frozen=True)
class DecisionState:
    """What one decision contributes per attribute, given its outcome and category."""

    day: dt.date
    model_id: str
    model_version: str
    ai_value: str
    human_value: str
    category: str
    human_correct: int
    ai_correct: int
    confidence_micros: int | None

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
    if outcome is None or normalize_value(outcome) == "":
        return Correctness.UNKNOWN
    return Correctness.CORRECT if value == normalize_value(outcome) else Correctness.WRONG


def decision_state(decision: "Decision", *, outcome: Any = ..., category: Any = ...) -> DecisionState:
    """The statistics state of a decision; `outcome`/`category` override the stored ones
    (a late outcome's previous state)."""
    outcome = decision.outcome if outcome is ... else outcome
    category = decision.calibration_category if category is ... else category
    ai_value = normalize_value(decision.ai_recommendation)
    human_value = normalize_value(decision.user_decision)
    timestamp = decision.timestamp
    if timezone.is_naive(timestamp):
        timestamp = timestamp.replace(tzinfo=dt.UTC)
    confidence = decision.ai_confidence
    return DecisionState(
        day=timestamp.astimezone(dt.UTC).date(),
        model_id=decision.model_id or "",
        model_version=decision.model_version or "",
        ai_value=ai_value,
        human_value=human_value,
        category=category or "CALIBRATED",
        human_correct=correctness(human_value, outcome),
        ai_correct=correctness(ai_value, outcome),
        confidence_micros=None if confidence is None else round(float(confidence) * 1_000_000),
    )


class Deltas:
    """Accumulated changes to statistics rows: count, confidence_count, confidence_micros."""

    def __init__(self) -> None:
        self.rows: dict[StatKey, list[int]] = defaultdict(lambda: [0, 0, 0])

    def add(self, state: DecisionState, attributes: dict[str, str], sign: int) -> None:
        for attribute, group in attributes.items():
            row = self.rows[state.key(attribute, group)]
            row[0] += sign
            if state.confidence_micros is not None:
                row[1] += sign
                row[2] += sign * state.confidence_micros


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
    "count",
    "confidence_count",
    "confidence_micros",
)


def upsert_stats(customer_id: str, deltas: Deltas) -> None:
    """Add the deltas to the statistics rows (one additive upsert per 500 rows), keyed by the
    digest of the dimensions so that the unique index stays small."""
    additive_upsert(
        SubgroupDailyStat,
        key=("customer_id", "key_hash"),
        values=_STAT_VALUES,
        add=("count", "confidence_count", "confidence_micros"),
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


def lock_decision(customer_id: str, decision_id: str) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                [_LOCK_CLASS, f"{customer_id}\x1f{decision_id}"],
            )


def lock_decisions(customer_id: str, decision_ids: list[str]) -> None:
    """lock_decision for many decisions in one statement, in sorted order (no deadlocks)."""
    if connection.vendor == "postgresql" and decision_ids:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_advisory_xact_lock(%s, hashtext(%s || chr(31) || d))) "
                "FROM unnest(%s::text[]) AS d",
                [_LOCK_CLASS, customer_id, sorted(decision_ids)],
            )


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
        return attachment.attributes
    return subgroups_lenient(decision.subgroups)
