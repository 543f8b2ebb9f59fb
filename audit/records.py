"""A decision's record: the fields a client sends, the fingerprint that tells a replay
from a conflict, the new row with its calibration category, and a late outcome applied to a row.
Used by the pipeline's planning step (audit.plan); pure, no database."""

import datetime as dt
import hashlib
from typing import Any

from audit import categories as rules
from audit.chain import canonical_json
from audit.exceptions import DecisionConflict
from audit.fields import DECISION_FIELDS
from audit.models import Decision
from config.timeutils import isoformat
from keys.models import Customer


def ms(value: dt.datetime) -> dt.datetime:
    """Timestamps are kept to the millisecond, the precision they are shown (and hashed) with."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def payload_fingerprint(data: dict[str, Any]) -> str:
    """The normalised request: the same decision sent again (alias or not, any offset)
    has the same fingerprint. The timestamp counts only when the client sent one."""
    doc = {name: data.get(name) for name in DECISION_FIELDS}
    timestamp = data.get("timestamp")
    doc["timestamp"] = isoformat(ms(timestamp)) if timestamp is not None else None
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def new_decision(*, customer: Customer, data: dict[str, Any], fingerprint: str, now: dt.datetime) -> Decision:
    """The decision row of a new decision (not saved), with its calibration category."""
    fields = {name: data.get(name) for name in DECISION_FIELDS if name != "decision_id"}
    decision = Decision(customer=customer, **fields)
    if data.get("decision_id"):
        decision.decision_id = data["decision_id"]
    decision.context = decision.context or ""
    decision.subgroups = decision.subgroups or {}
    decision.metadata = decision.metadata or {}
    decision.timestamp = ms(data.get("timestamp") or now)
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


def outcome_apply(decision: Decision, outcome: str) -> tuple[str | None, str]:
    """Set a late outcome on the row (not saved) and recompute its calibration category; returns the
    previous (outcome, category), which the aggregates move away from."""
    previous = decision.outcome, decision.calibration_category
    decision.outcome = outcome
    decision.calibration_category = rules.record_category(
        ai_recommendation=decision.ai_recommendation,
        user_decision=decision.user_decision,
        confidence=decision.ai_confidence,
        outcome=outcome,
    )
    return previous


def decision_conflict(decision_id: str) -> DecisionConflict:
    return DecisionConflict(
        f"decision_id '{decision_id}' was already logged with a different payload.",
        errors=[{"field": "decision_id", "message": "already used with a different payload"}],
    )
