"""Validation of the decision record (POST /log, POST /calibrate) without DRF serializer
machinery: these are the hottest endpoints, and building a serializer's fields costs more
than the rest of the request's Python. The rules are DecisionInput's (which documents the
schema); tests/audit/test_log_api.py holds both to every rule."""

import json
import math
from typing import Any

from rest_framework import serializers

from audit import models as m
from audit.serializers import DECISION_ID_RE, validate_subgroups
from config.exceptions import ValidationFailed
from config.timeutils import parse_timestamp

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
