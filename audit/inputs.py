"""The decision record of POST /log and POST /calibrate: DecisionInput documents it in the
schema, and parse_decision() validates it without DRF serializer machinery (these are the
hottest endpoints, and building a serializer's fields costs more than the rest of the
request's Python). tests/audit/test_log_api.py holds both to every rule. Other apps take
the record from here (decision_validated), never from audit's views or serializers."""

import json
import math
import re
from typing import Any

from rest_framework import serializers

from audit import models as m
from config.api import StrictCharField, UTCDateTimeField, require_object, validation_failed
from config.exceptions import ValidationFailed
from config.timeutils import parse_timestamp

DECISION_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
SUBGROUP_ATTRIBUTES = ("gender", "age_group", "ethnicity")
SUBGROUP_VALUE_MAX = 256
CUSTOM_KEYS_MAX = 32


class ConfidenceField(serializers.FloatField):
    """A JSON number in 0..1 (strings and booleans are a type error)."""

    default_error_messages = {"invalid": "Must be a number between 0 and 1."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        value = float(data)
        if not math.isfinite(value) or value < 0 or value > 1:
            raise serializers.ValidationError("Must be between 0 and 1.")
        return value


def _text(value: Any) -> bool:
    return (
        isinstance(value, str)
        and bool(value.strip())
        and len(value) <= SUBGROUP_VALUE_MAX
        and "\x00" not in value
    )


def validate_subgroups(value: Any) -> dict[str, Any]:
    """The subgroups object of POST /detect-bias: gender, age_group, ethnicity strings and
    custom {str: str}."""
    if not isinstance(value, dict):
        raise serializers.ValidationError("Must be an object.")
    unknown = sorted(set(value) - {*SUBGROUP_ATTRIBUTES, "custom"})
    if unknown:
        raise serializers.ValidationError(
            f"Unknown attribute(s) {', '.join(unknown)}; use gender, age_group, ethnicity or custom."
        )
    out: dict[str, Any] = {}
    for name in SUBGROUP_ATTRIBUTES:
        item = value.get(name)
        if item is None:
            continue
        if not _text(item):
            raise serializers.ValidationError(
                f"{name} must be a non-empty string of at most {SUBGROUP_VALUE_MAX} characters."
            )
        out[name] = item
    custom = value.get("custom")
    if custom is not None:
        if not isinstance(custom, dict):
            raise serializers.ValidationError("custom must be an object of strings.")
        if len(custom) > CUSTOM_KEYS_MAX:
            raise serializers.ValidationError(f"custom holds at most {CUSTOM_KEYS_MAX} attributes.")
        for key, item in custom.items():
            if not _text(key):
                raise serializers.ValidationError("custom keys must be non-empty strings.")
            if not _text(item):
                raise serializers.ValidationError(f"custom.{key} must be a non-empty string.")
        if custom:
            out["custom"] = dict(custom)
    return out


class DecisionInput(serializers.Serializer):
    """The body of POST /log (and the calibration record of POST /calibrate)."""

    decision_id = StrictCharField(required=False, allow_null=True, max_length=m.ID_MAX)
    user_id = StrictCharField(max_length=m.USER_ID_MAX)
    model_id = StrictCharField(required=False, allow_null=True, max_length=m.MODEL_ID_MAX)
    model_version = StrictCharField(required=False, allow_null=True, max_length=m.MODEL_VERSION_MAX)
    ai_recommendation = StrictCharField(max_length=m.VALUE_MAX)
    ai_confidence = ConfidenceField(
        required=False, allow_null=True, help_text="0..1; `confidence` is an alias"
    )
    confidence = ConfidenceField(required=False, allow_null=True, help_text="Alias of ai_confidence")
    user_decision = StrictCharField(max_length=m.VALUE_MAX)
    initial_decision = StrictCharField(required=False, allow_null=True, max_length=m.VALUE_MAX)
    outcome = StrictCharField(required=False, allow_null=True, max_length=m.VALUE_MAX)
    context = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=m.CONTEXT_MAX)  # type: ignore[assignment]
    subgroups = serializers.JSONField(required=False, allow_null=True)
    timestamp = UTCDateTimeField(required=False, allow_null=True)
    metadata = serializers.JSONField(required=False, allow_null=True)

    def validate_decision_id(self, value: str | None) -> str | None:
        if value is not None and not DECISION_ID_RE.match(value):
            raise serializers.ValidationError("1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'.")
        return value

    def validate_subgroups(self, value: Any) -> dict[str, Any]:
        return {} if value is None else validate_subgroups(value)

    def validate_metadata(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be an object.")
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        if size > m.METADATA_MAX_BYTES:
            raise serializers.ValidationError(
                f"Must be at most {m.METADATA_MAX_BYTES} bytes as JSON ({size} given)."
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        alias = attrs.pop("confidence", None)
        primary = attrs.get("ai_confidence")
        if alias is not None and primary is not None and alias != primary:
            raise serializers.ValidationError({"confidence": "Differs from ai_confidence; send one of them."})
        attrs["ai_confidence"] = primary if primary is not None else alias
        attrs["context"] = attrs.get("context") or ""
        attrs.setdefault("subgroups", {})
        attrs.setdefault("metadata", {})
        return attrs


# name -> (required, max_length, allow_blank)
_STRINGS: dict[str, tuple[bool, int, bool]] = {
    "decision_id": (False, m.ID_MAX, False),
    "user_id": (True, m.USER_ID_MAX, False),
    "model_id": (False, m.MODEL_ID_MAX, False),
    "model_version": (False, m.MODEL_VERSION_MAX, False),
    "ai_recommendation": (True, m.VALUE_MAX, False),
    "user_decision": (True, m.VALUE_MAX, False),
    "initial_decision": (False, m.VALUE_MAX, False),
    "outcome": (False, m.VALUE_MAX, False),
    "context": (False, m.CONTEXT_MAX, True),
}


def _confidence(value: Any) -> tuple[float | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, "Must be a number between 0 and 1."
    number = float(value)
    if not math.isfinite(number) or number < 0 or number > 1:
        return None, "Must be between 0 and 1."
    return number, None


def parse_decision(body: dict[str, Any]) -> dict[str, Any]:
    """The validated decision, or VALIDATION_ERROR listing every field problem."""
    errors: list[dict[str, str]] = []
    out: dict[str, Any] = {}

    def fail(field: str, message: str) -> None:
        errors.append({"field": field, "message": message})

    for name, (required, max_length, allow_blank) in _STRINGS.items():
        value = body.get(name)
        if value is None:
            if required:
                fail(name, "This field is required.")
            out[name] = None
            continue
        if not isinstance(value, str):
            fail(name, "Must be a string.")
        elif "\x00" in value:
            fail(name, "Null characters are not allowed.")
        elif not allow_blank and not value.strip():
            fail(name, "This field may not be blank.")
        elif len(value) > max_length:
            fail(name, f"Ensure this field has no more than {max_length} characters.")
        else:
            out[name] = value
    if out.get("decision_id") is not None and not DECISION_ID_RE.match(out["decision_id"]):
        fail("decision_id", "1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'.")

    primary, message = _confidence(body.get("ai_confidence"))
    if message:
        fail("ai_confidence", message)
    alias, message = _confidence(body.get("confidence"))
    if message:
        fail("confidence", message)
    if primary is not None and alias is not None and primary != alias:
        fail("confidence", "Differs from ai_confidence; send one of them.")
    out["ai_confidence"] = primary if primary is not None else alias

    try:
        out["subgroups"] = {} if body.get("subgroups") is None else validate_subgroups(body["subgroups"])
    except serializers.ValidationError as exc:
        fail("subgroups", str(exc.detail[0]) if isinstance(exc.detail, list) else str(exc.detail))

    metadata = body.get("metadata")
    if metadata is None:
        out["metadata"] = {}
    elif not isinstance(metadata, dict):
        fail("metadata", "Must be an object.")
    else:
        text = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
        size = len(text.encode("utf-8"))
        if "\\u0000" in text:  # PostgreSQL's jsonb refuses NUL characters
            fail("metadata", "Null characters are not allowed.")
        elif size > m.METADATA_MAX_BYTES:
            fail("metadata", f"Must be at most {m.METADATA_MAX_BYTES} bytes as JSON ({size} given).")
        out["metadata"] = metadata

    timestamp = body.get("timestamp")
    out["timestamp"] = None
    if timestamp is not None:
        parsed = parse_timestamp(timestamp) if isinstance(timestamp, str) else None
        if parsed is None:
            fail("timestamp", "Not a valid ISO 8601 timestamp.")
        out["timestamp"] = parsed

    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        raise ValidationFailed(detail, errors=errors)
    out["context"] = out.get("context") or ""
    return out


def decision_validated(body: Any) -> dict[str, Any]:
    """A request body as the decision record of POST /log and POST /calibrate (C2 on error)."""
    return parse_decision(require_object(body))


class LateOutcomeInput(serializers.Serializer):
    """POST /log {"decision_id", "outcome"} and nothing else: a later ground truth."""

    decision_id = StrictCharField(max_length=m.ID_MAX)
    outcome = StrictCharField(max_length=m.VALUE_MAX)


LATE_OUTCOME_KEYS = {"decision_id", "outcome"}


def is_late_outcome(body: dict[str, Any]) -> bool:
    """`{"decision_id", "outcome"}` and nothing else records a later ground truth (C5)."""
    return set(body) == LATE_OUTCOME_KEYS and body.get("outcome") is not None


def late_outcome_validated(body: dict[str, Any]) -> dict[str, str]:
    """The validated later ground truth, or VALIDATION_ERROR."""
    data = LateOutcomeInput(data=body)
    if not data.is_valid():
        raise validation_failed(serializers.ValidationError(data.errors))
    return dict(data.validated_data)
