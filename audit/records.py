"""A decision's record: the fields a client sends, the fingerprint that tells a replay
from a conflict, the new row with its calibration category, and a late outcome applied to a row.
Used by the pipeline's planning step (audit.plan); pure, no database."""

import datetime as dt
import hashlib

from audit import categories as rules
from audit.exceptions import DecisionConflict
from audit.fields import DECISION_FIELDS, FINGERPRINT_WHEN_SENT, REVIEW_SECONDS_MAX
from audit.hashing import canonical_json
from audit.inputs import DecisionInput
from audit.models import Decision
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from config.unsaved import unsaved
from keys.models import Customer


def ms(value: dt.datetime) -> dt.datetime:
    """Timestamps are kept to the millisecond, the precision they are shown (and hashed) with."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def columns(data: DecisionInput) -> dict[str, object]:
    """The decision's stored fields (audit.fields.DECISION_FIELDS) as its columns hold them:
    the subgroups given only, the probe as an object."""
    given = data.__dict__  # a pydantic model keeps its fields' values here: no lookup per field
    values: dict[str, object] = {name: given[name] for name in DECISION_FIELDS}
    values["subgroups"] = data.subgroups.stored()
    values["probe"] = data.probe.model_dump() if data.probe is not None else None
    return values


def payload_fingerprint(data: DecisionInput, values: dict[str, object] | None = None) -> str:
    """The normalised request: the same decision sent again (alias or not, any offset)
    has the same fingerprint. The timestamp counts only when the client sent one. `values`:
    the item's columns(data) when the caller has them (read here, never changed)."""
    if values is None:
        values = columns(data)
    doc = {name: values[name] for name in DECISION_FIELDS if name not in FINGERPRINT_WHEN_SENT}
    timestamp = data.timestamp
    doc["timestamp"] = isoformat(ms(timestamp)) if timestamp is not None else None
    for name in FINGERPRINT_WHEN_SENT:  # only when sent: older decisions keep their fingerprints
        value = values[name]
        if value is not None:
            doc[name] = isoformat(ms(value)) if isinstance(value, dt.datetime) else value
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def new_decision(
    *,
    customer: Customer,
    data: DecisionInput,
    fingerprint: str,
    now: dt.datetime,
    values: dict[str, object] | None = None,
) -> Decision:
    """The decision row of a new decision (not saved), with its calibration category.
    `values`: the item's columns(data) when the caller has them (taken over and changed)."""
    if values is None:
        values = columns(data)
    if not values["decision_id"]:
        del values["decision_id"]  # generated: the field's default
    values["customer_id"] = customer.pk
    values["timestamp"] = ms(data.timestamp or now)
    values["logged_at"] = now
    did_follow = values["followed_ai"] = rules.followed(data.ai_recommendation, data.user_decision)
    values["calibration_category"] = rules.record_category(
        ai_recommendation=data.ai_recommendation,
        user_decision=data.user_decision,
        confidence=data.ai_confidence,
        outcome=data.outcome,
        probe=data.probe is not None,
        followed=did_follow,  # compared once for both
    )
    values["payload_fingerprint"] = fingerprint
    decision: Decision = unsaved(Decision, values, related={"customer": customer})
    _oversight_set(decision)
    return decision


def _oversight_set(decision: Decision) -> None:
    """The review time (given, or from the two timestamps) and the probe's derived columns.
    A probe's outcome is its correct decision (the validator made it so), so its category is
    final (docs/reference/oversight.md)."""
    if decision.review_started_at is not None:
        decision.review_started_at = ms(decision.review_started_at)
        if decision.review_seconds is None:
            span = (decision.timestamp - decision.review_started_at).total_seconds()
            decision.review_seconds = min(max(span, 0.0), float(REVIEW_SECONDS_MAX))
    probe = decision.probe
    if probe:
        decision.probe_kind = probe["kind"]
        decision.probe_corrected = rules.same(decision.user_decision, probe["correct_decision"])


# an event's data by name, rendered as JSON
def probe_events(decision: Decision) -> list[tuple[str, JSONObject]]:
    """oversight.probe_missed for a new known_wrong probe whose reviewer followed the AI."""
    if decision.probe_kind != "known_wrong" or not decision.followed_ai:
        return []
    data = {"decision_id": decision.decision_id, "user_id": decision.user_id, "model_id": decision.model_id}
    return [("oversight.probe_missed", data)]


def probe_outcome_conflict(decision: Decision) -> DecisionConflict | None:
    """A later outcome for a vigilance probe: its outcome is its correct decision, for good."""
    if decision.probe_kind is None:
        return None
    return DecisionConflict(
        f"decision_id '{decision.decision_id}' is a vigilance probe: its outcome is its "
        "correct_decision and cannot be updated.",
        errors=[{"field": "outcome", "message": "a probe's outcome is fixed"}],
    )


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
        probe=decision.probe_kind is not None,
    )
    return previous


def decision_conflict(decision_id: str) -> DecisionConflict:
    return DecisionConflict(
        f"decision_id '{decision_id}' was already logged with a different payload.",
        errors=[{"field": "decision_id", "message": "already used with a different payload"}],
    )
