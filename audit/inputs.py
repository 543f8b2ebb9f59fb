"""The one validator of a decision item: the body of POST /log, of POST /calibrate, an item
of POST /log/batch and a row of import_decisions. The decision's fields are declared once
(`audit.fields.DECISION_INPUTS`, fields of the request-body layer `config.bodies`); this
module adds the rules that tie fields together (review time, probes) and the late outcome.
The same declarations give the OpenAPI schema of the bodies (DecisionInput,
LateOutcomeInput). tests/audit/test_log_api.py holds the validator to every rule."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from audit.fields import DECISION_INPUTS, ID_MAX, PROBE_KINDS, REVIEW_SECONDS_MAX, SUBGROUPS, VALUE_MAX
from config.api import require_object
from config.bodies import Body, Field, Problems, parse, serializer
from config.inputs import check_document

__all__ = ["SUBGROUPS", "Item", "decision_validated", "item_validated", "subgroup_attributes"]

# Both review fields given may disagree by this much (clocks and rounding), no more.
REVIEW_TOLERANCE_SECONDS = 1.0


def _norm(value: str) -> str:
    return value.strip().casefold()


def oversight_checked(out: dict[str, Any], problems: Problems) -> None:
    """The rules that tie the review time and the probe to the other fields
    (docs/reference/oversight.md, Review time rules and Probe rules). `review_seconds` stays
    as sent (None when only the start was sent: the record derives it from the stored
    timestamp). A valid probe's outcome becomes its correct decision."""
    started, seconds = out.get("review_started_at"), out.get("review_seconds")
    if started is not None:
        # Without a timestamp the decision is made now: the checks use now, the record the
        # stored timestamp (a few milliseconds later, so the span only grows by as much).
        made = out.get("timestamp") or dt.datetime.now(dt.UTC)
        span = (made - started).total_seconds()
        if span < 0:
            problems.add("review_started_at", "must not be after the decision's timestamp")
        elif seconds is None and span > REVIEW_SECONDS_MAX:
            problems.add(
                "review_started_at",
                f"must be at most {REVIEW_SECONDS_MAX:,} seconds before the decision's timestamp",
            )
        elif seconds is not None and abs(span - seconds) > REVIEW_TOLERANCE_SECONDS:
            problems.add(
                "review_seconds",
                f"differs from timestamp - review_started_at ({span:g} s) by more than "
                f"{REVIEW_TOLERANCE_SECONDS:g} s; send one of them, or both in agreement",
            )
    probe = out.get("probe")
    recommendation = out.get("ai_recommendation")
    if probe is None or recommendation is None:
        return
    kind, correct = probe["kind"], probe["correct_decision"]
    same = _norm(correct) == _norm(recommendation)
    if kind == "known_wrong" and same:
        problems.add(
            "probe.correct_decision",
            "a known_wrong probe's correct_decision must differ from ai_recommendation",
        )
    elif kind == "known_right" and not same:
        problems.add(
            "probe.correct_decision", "a known_right probe's correct_decision must equal ai_recommendation"
        )
    elif out.get("outcome") is not None and _norm(out["outcome"]) != _norm(correct):
        problems.add("outcome", "a probe's outcome is its correct_decision: send that, or no outcome")
    else:
        out["outcome"] = correct  # fixed: a replay with or without the outcome is the same payload


assert PROBE_KINDS == ("known_wrong", "known_right")

DECISION = Body(
    "DecisionInput",
    DECISION_INPUTS,
    checks=(oversight_checked,),
    doc="The body of POST /log (and the decision of POST /calibrate).",
)

LATE_OUTCOME = Body(
    "LateOutcomeInput",
    (
        Field("decision_id", required=True, max_length=ID_MAX),
        Field("outcome", required=True, max_length=VALUE_MAX),
    ),
    doc='POST /log {"decision_id", "outcome"} and nothing else: a later ground truth.',
)

DecisionInput = serializer(DECISION)
LateOutcomeInput = serializer(LATE_OUTCOME)


def decision_validated(body: Any) -> dict[str, Any]:
    """A request body as a decision (POST /calibrate has no outcome updates)."""
    return parse(DECISION, body)


LATE_OUTCOME_KEYS = {"decision_id", "outcome"}


def is_late_outcome(body: dict[str, Any]) -> bool:
    """`{"decision_id", "outcome"}` and nothing else records a later ground truth."""
    return len(body) == 2 and set(body) == LATE_OUTCOME_KEYS and body.get("outcome") is not None


@dataclass(frozen=True)
class Item:
    """A validated decision item: `kind` is "decision" or "outcome" (a later ground truth)."""

    kind: str
    data: dict[str, Any]


def item_validated(body: Any, *, strings_checked: bool = True, outcomes: bool = True) -> Item:
    """The one validator of every door. `strings_checked=False` where the parser left the
    strings to the item (a batch: one bad item, one rejection); `outcomes=False` where the
    body is always a decision (POST /calibrate)."""
    if not strings_checked:
        check_document(body)
    body = require_object(body)
    if outcomes and is_late_outcome(body):
        return Item("outcome", parse(LATE_OUTCOME, body))
    return Item("decision", parse(DECISION, body))


def subgroup_attributes(subgroups: dict[str, Any]) -> dict[str, str]:
    """Subgroups as attribute names (docs/reference/bias.md, Subgroups):
    {"gender": "female", "custom": {"region": "north"}} -> {"gender": "female", "custom.region": "north"}."""
    out = {name: value for name, value in subgroups.items() if name != "custom"}
    for key, value in (subgroups.get("custom") or {}).items():
        out[f"custom.{key}"] = value
    return out
