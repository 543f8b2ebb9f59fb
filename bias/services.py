"""Writes for bias detection and the subgroup statistics store.

SEAM (fixed by the foundation): audit's decision services call
subgroup_stats_on_decision_logged / subgroup_stats_on_outcome_changed inside the same
transaction as the decision write, so the statistics never drift from the decisions.

Every write that can change what a decision contributes to the statistics (the decision
being logged, subgroups attached or replaced, a late outcome) first takes a per-decision
lock (a PostgreSQL transaction-level advisory lock on (customer, decision_id); SQLite
serialises writers anyway). Without it, POST /detect-bias and POST /log racing on the same
decision_id could each miss the other's uncommitted row and the subgroups would never be
counted.
"""

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.utils import timezone

from audit import selectors as audit_selectors
from bias import selectors
from bias.domain import (
    DETECTION_WINDOW_DAYS,
    REGULATION,
    cap_severity,
    difference_severity,
    normalize_value,
    ratio_severity,
    subgroups_lenient,
    two_proportion_p_value,
    worst,
)
from bias.models import (
    SEVERITY_RANK,
    BiasAlert,
    BiasAlertFinding,
    Correctness,
    SubgroupAttachment,
    SubgroupDailyStat,
)
from keys.models import Customer

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


def _correctness(value: str, outcome: str | None) -> int:
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
        human_correct=_correctness(human_value, outcome),
        ai_correct=_correctness(ai_value, outcome),
        confidence_micros=None if confidence is None else round(float(confidence) * 1_000_000),
    )


class _Deltas:
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


def _upsert_stats(customer_id: str, deltas: _Deltas, *, batch: int = 500) -> None:
    """Add the deltas to the statistics rows with one additive upsert per batch. Rows are
    sorted so that concurrent writers lock them in the same order (no deadlocks)."""
    rows = sorted((key, v) for key, v in deltas.rows.items() if any(v))
    if not rows:
        return
    table = connection.ops.quote_name(SubgroupDailyStat._meta.db_table)
    columns = (
        "customer_id",
        "key_hash",
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
    column_sql = ", ".join(connection.ops.quote_name(c) for c in columns)
    placeholders = "(" + ", ".join(["%s"] * len(columns)) + ")"
    additive = ", ".join(
        f"{q} = s.{q} + EXCLUDED.{q}" for q in ('"count"', '"confidence_count"', '"confidence_micros"')
    )
    conflict_sql = f'ON CONFLICT ("customer_id", "key_hash") DO UPDATE SET {additive}'
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            params: list[Any] = []
            for key, (count, conf_count, conf_micros) in chunk:
                params += [
                    customer_id,
                    key.digest(),
                    key.day,
                    key.model_id,
                    key.model_version,
                    key.attribute,
                    key.group_value,
                    key.ai_value,
                    key.human_value,
                    key.category,
                    key.human_correct,
                    key.ai_correct,
                    count,
                    conf_count,
                    conf_micros,
                ]
            values_sql = ", ".join([placeholders] * len(chunk))
            # Identifiers come from the model's metadata; every value is a bound parameter.
            sql = f"INSERT INTO {table} AS s ({column_sql}) VALUES {values_sql} {conflict_sql}"  # noqa: S608
            cursor.execute(sql, params)


def _lock_decision(customer_id: str, decision_id: str) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                [_LOCK_CLASS, f"{customer_id}\x1f{decision_id}"],
            )


def _in_transaction(fn):
    """Run inside the caller's transaction (the audit hooks) or, if there is none, a new one;
    no savepoint on the hot path of POST /log."""

    def wrapper(**kwargs):
        if connection.in_atomic_block:
            return fn(**kwargs)
        with transaction.atomic():
            return fn(**kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _attachment(customer_id: str, decision_id: str) -> SubgroupAttachment | None:
    """The decision's attachment row, if any (unique lookup, no ORDER BY)."""
    rows = SubgroupAttachment.objects.filter(customer_id=customer_id, decision_id=decision_id).only(
        "id", "attributes", "counted"
    )[:1]
    return next(iter(rows), None)


def _counted_attributes(decision: "Decision", attachment: SubgroupAttachment | None) -> dict[str, str]:
    """The attributes a logged decision is counted under: its attachment's once one was
    made through POST /detect-bias, else the subgroups it was logged with. (A decision
    logged with subgroups gets no attachment row: one insert less on POST /log.)"""
    if attachment is not None and attachment.counted:
        return attachment.attributes
    return subgroups_lenient(decision.subgroups)


# --- the seam hooks ---------------------------------------------------------------------------


@_in_transaction
def subgroup_stats_on_decision_logged(*, decision: "Decision") -> None:
    """A new decision was stored (audit.models.Decision). Attach any subgroups posted
    earlier by POST /detect-bias for this decision_id, and count the decision in the
    daily subgroup statistics. Subgroups carried by the decision itself are the later
    attachment and replace pending ones."""
    _lock_decision(decision.customer_id, decision.decision_id)
    own = subgroups_lenient(decision.subgroups)
    attachment = _attachment(decision.customer_id, decision.decision_id)
    attributes = own
    if attachment is not None:
        attributes = own or attachment.attributes
        SubgroupAttachment.objects.filter(pk=attachment.pk).update(
            attributes=attributes, counted=True, updated_at=timezone.now()
        )
    if attributes:
        deltas = _Deltas()
        deltas.add(decision_state(decision), attributes, +1)
        _upsert_stats(decision.customer_id, deltas)


@_in_transaction
def subgroup_stats_on_outcome_changed(
    *, decision: "Decision", previous_outcome: str | None, previous_category: str
) -> None:
    """A late outcome changed a stored decision's outcome (and so possibly its
    calibration_category and correctness). Move its counts from the old state to the new."""
    _lock_decision(decision.customer_id, decision.decision_id)
    attachment = _attachment(decision.customer_id, decision.decision_id)
    attributes = _counted_attributes(decision, attachment)
    if not attributes:
        return
    old = decision_state(decision, outcome=previous_outcome, category=previous_category)
    new = decision_state(decision)
    if old == new:
        return
    deltas = _Deltas()
    deltas.add(old, attributes, -1)
    deltas.add(new, attributes, +1)
    _upsert_stats(decision.customer_id, deltas)


class SubgroupBatch:
    """The subgroup statistics of a batch of decision writes (POST /log/batch), with the
    effects of the same writes one by one: record them in order during the batch (the
    state is taken at that moment), then apply() once, after the new decision rows are
    inserted and before the chain head is locked, the same lock order as the single path.
    apply() takes every decision's lock in one sorted statement, reads their attachments
    in one query and writes one additive upsert per 500 statistics rows."""

    def __init__(self, customer_id: str) -> None:
        self.customer_id = customer_id
        # (kind, decision, new state, old state)
        self.ops: list[tuple[str, Decision, DecisionState, DecisionState | None]] = []

    def decision_logged(self, decision: "Decision") -> None:
        self.ops.append(("new", decision, decision_state(decision), None))

    def outcome_changed(
        self, decision: "Decision", *, previous_outcome: str | None, previous_category: str
    ) -> None:
        old = decision_state(decision, outcome=previous_outcome, category=previous_category)
        self.ops.append(("outcome", decision, decision_state(decision), old))

    def apply(self) -> None:
        if not self.ops:
            return
        ids = sorted({decision.decision_id for _, decision, _, _ in self.ops})
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(pg_advisory_xact_lock(%s, hashtext(%s || chr(31) || d))) "
                    "FROM unnest(%s::text[]) AS d",
                    [_LOCK_CLASS, self.customer_id, ids],
                )
        attachments: dict[str, SubgroupAttachment] = {}
        for start in range(0, len(ids), 900):
            for row in SubgroupAttachment.objects.filter(
                customer_id=self.customer_id, decision_id__in=ids[start : start + 900]
            ).only("id", "decision_id", "attributes", "counted"):
                attachments[row.decision_id] = row
        counted: dict[str, dict[str, str]] = {}
        touched: list[SubgroupAttachment] = []
        deltas = _Deltas()
        now = timezone.now()
        for kind, decision, state, old in self.ops:
            attachment = attachments.get(decision.decision_id)
            if kind == "new":
                attributes = subgroups_lenient(decision.subgroups)
                if attachment is not None:
                    attributes = attributes or attachment.attributes
                    attachment.attributes, attachment.counted, attachment.updated_at = attributes, True, now
                    touched.append(attachment)
                counted[decision.decision_id] = attributes
                if attributes:
                    deltas.add(state, attributes, +1)
                continue
            if decision.decision_id not in counted:
                counted[decision.decision_id] = _counted_attributes(decision, attachment)
            attributes = counted[decision.decision_id]
            if attributes and old is not None and old != state:
                deltas.add(old, attributes, -1)
                deltas.add(state, attributes, +1)
        _upsert_stats(self.customer_id, deltas)
        if touched:
            SubgroupAttachment.objects.bulk_update(
                touched, ["attributes", "counted", "updated_at"], batch_size=500
            )


def subgroup_stats_on_decisions_bulk_logged(*, customer: Customer, decisions: Iterable[Any]) -> int:
    """Bulk form of subgroup_stats_on_decision_logged for decisions inserted in bulk
    (imports, seeding): one upsert per 500 statistics rows instead of one per decision.
    The caller guarantees no concurrent writer for these decision_ids. Returns the number
    of decisions counted."""
    decisions = list(decisions)
    if not decisions:
        return 0
    with transaction.atomic():
        pending = {
            a.decision_id: a
            for a in SubgroupAttachment.objects.filter(
                customer=customer, decision_id__in=[d.decision_id for d in decisions]
            )
        }
        deltas = _Deltas()
        now = timezone.now()
        updated, counted = [], 0
        for decision in decisions:
            own = subgroups_lenient(decision.subgroups)
            attachment = pending.get(decision.decision_id)
            attributes = own
            if attachment is not None:
                attributes = own or attachment.attributes
                attachment.attributes, attachment.counted, attachment.updated_at = attributes, True, now
                updated.append(attachment)
            if attributes:
                deltas.add(decision_state(decision), attributes, +1)
                counted += 1
        _upsert_stats(customer.pk, deltas)
        SubgroupAttachment.objects.bulk_update(
            updated, ["attributes", "counted", "updated_at"], batch_size=1000
        )
        return counted


def subgroups_attach(*, customer: Customer, decision_id: str, attributes: dict[str, str]) -> Any:
    """Attach (or replace) a decision's subgroups. When the decision is already logged its
    counts move from the old attributes to the new ones; otherwise the subgroups wait in
    the pending row until the decision arrives. Returns the decision or None."""
    with transaction.atomic():
        _lock_decision(customer.pk, decision_id)
        decision = audit_selectors.decision_get(customer, decision_id)
        attachment = _attachment(customer.pk, decision_id)
        if decision is None:
            if attachment is not None and attachment.attributes == attributes:
                return None  # the same pending subgroups again
        else:
            old = _counted_attributes(decision, attachment)
            if old == attributes:
                return decision  # the same subgroups again: nothing moves
            deltas = _Deltas()
            state = decision_state(decision)
            deltas.add(state, old, -1)
            deltas.add(state, attributes, +1)
            _upsert_stats(customer.pk, deltas)
        now = timezone.now()
        if attachment is None:
            SubgroupAttachment.objects.create(
                customer=customer,
                decision_id=decision_id,
                attributes=attributes,
                counted=decision is not None,
                created_at=now,
                updated_at=now,
            )
        else:
            SubgroupAttachment.objects.filter(pk=attachment.pk).update(
                attributes=attributes, counted=decision is not None, updated_at=now
            )
        return decision


# --- detection --------------------------------------------------------------------------------


def _rate(x: int, n: int) -> Fraction:
    return Fraction(x, n)


def _round(value: Fraction | float) -> float:
    return round(float(value), 6)


_RATE_METRICS = [
    # bias_type, numerator, denominator, higher_is_better
    ("outcome_disparity", lambda g: g.favorable, lambda g: g.decisions, True),
    ("recommendation_disparity", lambda g: g.ai_favorable, lambda g: g.decisions, True),
    ("override_disparity", lambda g: g.decisions - g.agreements, lambda g: g.decisions, False),
    ("accuracy_disparity", lambda g: g.with_outcome - g.correct, lambda g: g.with_outcome, False),
]


def _reference(groups: list[tuple[Any, int, int]], higher_is_better: bool):
    """The advantaged group: the best rate among the groups with at least 30 decisions (in
    the metric's denominator), or among all groups when none is that large, so that a tiny
    group's lucky rate never becomes everyone's yardstick. Ties: the larger group, then the
    name."""
    from bias.domain import MIN_GROUP_SIZE

    eligible = [g for g in groups if g[2] >= MIN_GROUP_SIZE] or groups
    sign = 1 if higher_is_better else -1
    return max(eligible, key=lambda g: (sign * _rate(g[1], g[2]), g[2], g[0].group))


def attribute_findings(attribute: str, groups: list[selectors.GroupCounts]) -> list[dict[str, Any]]:
    """The findings of C7 for one attribute: every group compared with the reference group
    of each bias type; findings of severity none left out."""
    findings: list[dict[str, Any]] = []
    for bias_type, numerator, denominator, higher_is_better in _RATE_METRICS:
        rows = [(g, numerator(g), denominator(g)) for g in groups if denominator(g) > 0]
        if len(rows) < 2:
            continue
        ref, x_ref, n_ref = _reference(rows, higher_is_better)
        rate_ref = _rate(x_ref, n_ref)
        for g, x, n in rows:
            if g is ref:
                continue
            rate = _rate(x, n)
            gap = (rate_ref - rate) if higher_is_better else (rate - rate_ref)
            if gap <= 0:
                continue
            p_value = two_proportion_p_value(x, n, x_ref, n_ref)
            cases = [(bias_type, gap, difference_severity(gap))]
            if bias_type == "outcome_disparity" and rate_ref > 0:
                ratio = rate / rate_ref
                cases.append(("disparate_impact", ratio, ratio_severity(ratio)))
            for kind, value, severity in cases:
                severity = cap_severity(severity, n_group=n, n_reference=n_ref, p_value=p_value)
                if severity == "none":
                    continue
                findings.append(
                    {
                        "bias_type": kind,
                        "attribute": attribute,
                        "group": g.group,
                        "reference_group": ref.group,
                        "group_rate": _round(rate),
                        "reference_rate": _round(rate_ref),
                        "value": _round(value),
                        "sample_sizes": {"group": n, "reference_group": n_ref},
                        "p_value": p_value,
                        "severity": severity,
                        "regulation": REGULATION,
                    }
                )
    return findings


def _sort_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        findings, key=lambda f: (-SEVERITY_RANK[f["severity"]], f["attribute"], f["bias_type"], f["group"])
    )


def bias_detect(*, customer: Customer, decision_id: str, attributes: dict[str, str]) -> dict[str, Any]:
    """POST /detect-bias (C7): attach the subgroups, then analyse each attribute present
    over the customer's decisions of the same model (all models when the decision has none
    or is not logged yet) in the last 30 days (whole UTC days: from the day containing now
    minus 30 days). Stores a bias alert for severity low and above and fires bias.detected
    for medium and above, in the same transaction."""
    from webhooks.services import event_emit

    with transaction.atomic():
        decision = subgroups_attach(customer=customer, decision_id=decision_id, attributes=attributes)
        model_id = (decision.model_id or None) if decision is not None else None
        now = timezone.now()
        since = (now - dt.timedelta(days=DETECTION_WINDOW_DAYS)).date()
        by_attribute = selectors.subgroup_counts(
            customer=customer,
            attributes=sorted(attributes),
            model_id=model_id,
            from_day=since,
            to_day=now.date(),
        )
        findings: list[dict[str, Any]] = []
        for attribute in sorted(attributes):
            findings += attribute_findings(attribute, by_attribute.get(attribute, []))
        findings = _sort_findings(findings)
        severity = worst([f["severity"] for f in findings])
        alert = None
        if SEVERITY_RANK[severity] >= SEVERITY_RANK["low"]:
            bias_types = sorted({f["bias_type"] for f in findings})
            alert_attributes = sorted({f["attribute"] for f in findings})
            alert = BiasAlert.objects.create(
                customer=customer,
                decision_id=decision_id,
                model_id=model_id,
                severity=severity,
                bias_types=bias_types,
                attributes=alert_attributes,
                findings=findings,
                created_at=now,
            )
            BiasAlertFinding.objects.bulk_create(
                BiasAlertFinding(
                    alert=alert,
                    bias_type=f["bias_type"],
                    attribute=f["attribute"],
                    group_value=f["group"],
                    reference_group=f["reference_group"],
                    severity=f["severity"],
                    value=f["value"],
                    p_value=f["p_value"],
                )
                for f in findings
            )
            if SEVERITY_RANK[severity] >= SEVERITY_RANK["medium"]:
                event_emit(
                    customer=customer,
                    type="bias.detected",
                    data={
                        "alert_id": alert.id,
                        "decision_id": decision_id,
                        "model_id": model_id,
                        "severity": severity,
                        "bias_types": bias_types,
                        "attributes": alert_attributes,
                    },
                )
        return {
            "decision_id": decision_id,
            "bias_detected": alert is not None,
            "severity": severity,
            "findings": findings,
            "alert_id": alert.id if alert else None,
            "analyzed_at": now,
        }
