"""The one validator of a decision item: the body of POST /log, of POST /calibrate, an item
of POST /log/batch and a row of import_decisions. It reads the field declarations of
`audit.fields.DECISION_INPUTS` and validates without DRF serializer machinery (these are
the hottest endpoints, and building a serializer's fields costs more than the rest of the
request's Python). DecisionInput, the schema of the same body for the OpenAPI document, is
generated from the same declarations. tests/audit/test_log_api.py holds the validator to
every rule."""

import datetime as dt
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from audit.fields import (
    DECISION_INPUTS,
    ID_MAX,
    METADATA_MAX_BYTES,
    REVIEW_SECONDS_MAX,
    VALUE_MAX,
    DecisionField,
)
from config.api import StrictCharField, UTCDateTimeField, require_object
from config.exceptions import ValidationFailed
from config.inputs import check_document
from config.timeutils import parse_timestamp

DECISION_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
SUBGROUP_ATTRIBUTES = ("gender", "age_group", "ethnicity")
SUBGROUP_VALUE_MAX = 256
CUSTOM_KEYS_MAX = 32


class FieldProblem(Exception):
    """One field's problem (its message); the validator lists every field's together."""


def _text_ok(value: Any) -> bool:
    return (
        isinstance(value, str)
        and bool(value.strip())
        and len(value) <= SUBGROUP_VALUE_MAX
        and "\x00" not in value
    )


def validate_subgroups(value: Any) -> dict[str, Any]:
    """The subgroups object of POST /detect-bias: gender, age_group, ethnicity strings and
    custom {str: str}. Raises FieldProblem."""
    if not isinstance(value, dict):
        raise FieldProblem("Must be an object.")
    unknown = sorted(set(value) - {*SUBGROUP_ATTRIBUTES, "custom"})
    if unknown:
        raise FieldProblem(
            f"Unknown attribute(s) {', '.join(unknown)}; use gender, age_group, ethnicity or custom."
        )
    out: dict[str, Any] = {}
    for name in SUBGROUP_ATTRIBUTES:
        item = value.get(name)
        if item is None:
            continue
        if not _text_ok(item):
            raise FieldProblem(
                f"{name} must be a non-empty string of at most {SUBGROUP_VALUE_MAX} characters."
            )
        out[name] = item
    custom = value.get("custom")
    if custom is not None:
        if not isinstance(custom, dict):
            raise FieldProblem("custom must be an object of strings.")
        if len(custom) > CUSTOM_KEYS_MAX:
            raise FieldProblem(f"custom holds at most {CUSTOM_KEYS_MAX} attributes.")
        for key, item in custom.items():
            if not _text_ok(key):
                raise FieldProblem("custom keys must be non-empty strings.")
            if not _text_ok(item):
                raise FieldProblem(f"custom.{key} must be a non-empty string.")
        if custom:
            out["custom"] = dict(custom)
    return out


# --- one parser per kind of DecisionField: the value (not None) -> the stored value ----------


def _text(field: DecisionField, value: Any) -> str:
    if not isinstance(value, str):
        raise FieldProblem("Must be a string.")
    if "\x00" in value:
        raise FieldProblem("Null characters are not allowed.")
    if not field.allow_blank and not value.strip():
        raise FieldProblem("This field may not be blank.")
    if len(value) > field.max_length:
        raise FieldProblem(f"Ensure this field has no more than {field.max_length} characters.")
    return value


def _id(field: DecisionField, value: Any) -> str:
    value = _text(field, value)
    if not DECISION_ID_RE.match(value):
        raise FieldProblem("1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'.")
    return value


def _confidence(field: DecisionField, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldProblem("Must be a number between 0 and 1.")
    number = float(value)
    if not math.isfinite(number) or number < 0 or number > 1:
        raise FieldProblem("Must be between 0 and 1.")
    return number


def _subgroups(field: DecisionField, value: Any) -> dict[str, Any]:
    return validate_subgroups(value)


def _metadata(field: DecisionField, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldProblem("Must be an object.")
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    size = len(text.encode("utf-8"))
    if "\\u0000" in text:  # PostgreSQL's jsonb refuses NUL characters
        raise FieldProblem("Null characters are not allowed.")
    if size > METADATA_MAX_BYTES:
        raise FieldProblem(f"Must be at most {METADATA_MAX_BYTES} bytes as JSON ({size} given).")
    return value


def _timestamp(field: DecisionField, value: Any) -> Any:
    parsed = parse_timestamp(value) if isinstance(value, str) else None
    if parsed is None:
        raise FieldProblem("Not a valid ISO 8601 timestamp.")
    return parsed


def _seconds(field: DecisionField, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FieldProblem(f"Must be a number of seconds between 0 and {REVIEW_SECONDS_MAX:,}.")
    if not 0 <= value <= REVIEW_SECONDS_MAX:
        raise FieldProblem(f"Must be between 0 and {REVIEW_SECONDS_MAX:,} seconds.")
    return float(value)  # 12 and 12.0 are the same review time, in the fingerprint too


def _probe(field: DecisionField, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - {"kind", "correct_decision"}:
        raise FieldProblem('Must be an object {"kind", "correct_decision"} and nothing else.')
    return value


PARSERS: dict[str, Callable[[DecisionField, Any], Any]] = {
    "id": _id,
    "text": _text,
    "confidence": _confidence,
    "subgroups": _subgroups,
    "metadata": _metadata,
    "timestamp": _timestamp,
    "seconds": _seconds,
    "probe": _probe,
}

# What a field holds when the client leaves it out.
_EMPTY: dict[str, Callable[[], Any]] = {"subgroups": dict, "metadata": dict}


def parse_decision(body: dict[str, Any]) -> dict[str, Any]:
    """The validated decision, or VALIDATION_ERROR listing every field problem."""
    errors: list[dict[str, str]] = []
    out: dict[str, Any] = {}
    for field in DECISION_INPUTS:
        value = body.get(field.name)
        parse = PARSERS[field.kind]
        try:
            parsed = None if value is None else parse(field, value)
        except FieldProblem as exc:
            errors.append({"field": field.name, "message": str(exc)})
            parsed = None
        if field.alias is not None:
            alias = body.get(field.alias)
            try:
                other = None if alias is None else parse(field, alias)
            except FieldProblem as exc:
                errors.append({"field": field.alias, "message": str(exc)})
                other = None
            if parsed is not None and other is not None and parsed != other:
                errors.append(
                    {"field": field.alias, "message": f"Differs from {field.name}; send one of them."}
                )
            parsed = parsed if parsed is not None else other
        if parsed is None:
            if field.required and value is None:
                errors.append({"field": field.name, "message": "This field is required."})
            parsed = _EMPTY[field.kind]() if field.kind in _EMPTY else None
        out[field.name] = parsed
    oversight_checked(out, errors)
    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        raise ValidationFailed(detail, errors=errors)
    out["context"] = out.get("context") or ""
    return out


# Both review fields given may disagree by this much (clocks and rounding), no more.
REVIEW_TOLERANCE_SECONDS = 1.0
PROBE_KINDS = ("known_wrong", "known_right")


def _norm(value: str) -> str:
    return value.strip().casefold()


def oversight_checked(out: dict[str, Any], errors: list[dict[str, str]]) -> None:
    """The rules that tie the review time and the probe to the other fields
    (docs/reference/oversight.md, Review time rules and Probe rules). Appends to `errors`;
    `review_seconds` stays as sent (None when only the start was sent: the record derives it
    from the stored timestamp). A valid probe's outcome becomes its correct decision."""

    def fail(field: str, message: str) -> None:
        errors.append({"field": field, "message": message})

    started, seconds = out.get("review_started_at"), out.get("review_seconds")
    if started is not None:
        # Without a timestamp the decision is made now: the checks use now, the record the
        # stored timestamp (a few milliseconds later, so the span only grows by as much).
        made = out.get("timestamp") or dt.datetime.now(dt.UTC)
        span = (made - started).total_seconds()
        if span < 0:
            fail("review_started_at", "Must not be after the decision's timestamp.")
        elif seconds is None and span > REVIEW_SECONDS_MAX:
            fail(
                "review_started_at",
                f"Must be at most {REVIEW_SECONDS_MAX:,} seconds before the decision's timestamp.",
            )
        elif seconds is not None and abs(span - seconds) > REVIEW_TOLERANCE_SECONDS:
            fail(
                "review_seconds",
                f"Differs from timestamp - review_started_at ({span:g} s) by more than "
                f"{REVIEW_TOLERANCE_SECONDS:g} s; send one of them, or both in agreement.",
            )
    probe = out.get("probe")
    if probe is None:
        return
    kind, correct = probe.get("kind"), probe.get("correct_decision")
    if kind not in PROBE_KINDS:
        fail("probe.kind", f"Must be one of: {', '.join(PROBE_KINDS)}.")
    if not isinstance(correct, str) or not correct.strip() or "\x00" in correct:
        fail("probe.correct_decision", "Must be a non-empty string.")
        return
    if len(correct) > VALUE_MAX:
        fail("probe.correct_decision", f"Ensure this field has no more than {VALUE_MAX} characters.")
        return
    recommendation = out.get("ai_recommendation")
    if kind not in PROBE_KINDS or recommendation is None:
        return
    same = _norm(correct) == _norm(recommendation)
    if kind == "known_wrong" and same:
        fail(
            "probe.correct_decision",
            "A known_wrong probe's correct_decision must differ from ai_recommendation.",
        )
    elif kind == "known_right" and not same:
        fail("probe.correct_decision", "A known_right probe's correct_decision must equal ai_recommendation.")
    elif out.get("outcome") is not None and _norm(out["outcome"]) != _norm(correct):
        fail("outcome", "A probe's outcome is its correct_decision: send that, or no outcome.")
    else:
        out["probe"] = {"kind": kind, "correct_decision": correct}
        out["outcome"] = correct  # fixed: a replay with or without the outcome is the same payload


def decision_validated(body: Any) -> dict[str, Any]:
    """A request body as a decision (POST /calibrate has no outcome updates)."""
    return parse_decision(require_object(body))


LATE_OUTCOME_KEYS = {"decision_id", "outcome"}


def is_late_outcome(body: dict[str, Any]) -> bool:
    """`{"decision_id", "outcome"}` and nothing else records a later ground truth."""
    return len(body) == 2 and set(body) == LATE_OUTCOME_KEYS and body.get("outcome") is not None


_OUTCOME_FIELDS = (
    DecisionField("decision_id", max_length=ID_MAX),
    DecisionField("outcome", max_length=VALUE_MAX),
)


def late_outcome_validated(body: dict[str, Any]) -> dict[str, str]:
    """The validated later ground truth, or VALIDATION_ERROR."""
    errors: list[dict[str, str]] = []
    out: dict[str, str] = {}
    for field in _OUTCOME_FIELDS:
        try:
            out[field.name] = _text(field, body.get(field.name))
        except FieldProblem as exc:
            errors.append({"field": field.name, "message": str(exc)})
    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        raise ValidationFailed(detail, errors=errors)
    return out


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
        return Item("outcome", late_outcome_validated(body))
    return Item("decision", parse_decision(body))


# --- the OpenAPI schema of the same bodies --------------------------------------------------


class ConfidenceField(serializers.FloatField):
    """A JSON number in 0..1 (schema only; the validator above is what runs)."""


class ProbeInput(serializers.Serializer):
    """A vigilance probe (docs/reference/oversight.md, Probe rules)."""

    kind = serializers.ChoiceField(choices=list(PROBE_KINDS))
    correct_decision = StrictCharField(
        max_length=VALUE_MAX,
        help_text="known_wrong: differs from ai_recommendation; known_right: equals it (trimmed, case-folded)",
    )


def _schema_field(field: DecisionField, help_text: str = "") -> serializers.Field | serializers.Serializer:
    optional: dict[str, Any] = {
        "required": field.required,
        "allow_null": not field.required,
        "help_text": help_text or None,
    }
    if field.kind in ("id", "text"):
        return StrictCharField(max_length=field.max_length, allow_blank=field.allow_blank, **optional)
    if field.kind == "confidence":
        return ConfidenceField(min_value=0, max_value=1, **optional)
    if field.kind == "timestamp":
        return UTCDateTimeField(**optional)
    if field.kind == "seconds":
        return serializers.FloatField(min_value=0, max_value=REVIEW_SECONDS_MAX, **optional)
    if field.kind == "probe":
        return ProbeInput(**optional)
    return serializers.JSONField(**optional)


def _schema_fields() -> dict[str, Any]:
    attrs: dict[str, Any] = {"__doc__": "The body of POST /log (and the decision of POST /calibrate)."}
    for field in DECISION_INPUTS:
        attrs[field.name] = _schema_field(field, f"`{field.alias}` is an alias" if field.alias else "")
        if field.alias:
            attrs[field.alias] = _schema_field(field, f"Alias of {field.name}")
    return attrs


DecisionInput = type("DecisionInput", (serializers.Serializer,), _schema_fields())


class LateOutcomeInput(serializers.Serializer):
    """POST /log {"decision_id", "outcome"} and nothing else: a later ground truth."""

    decision_id = StrictCharField(max_length=ID_MAX)
    outcome = StrictCharField(max_length=VALUE_MAX)
