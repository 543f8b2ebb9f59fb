"""Input validation and output shapes of POST /log, POST /calibrate and GET /audit-trail."""

import json
import math
import re
from typing import Any

from rest_framework import serializers

from audit import models as m
from audit.chain import ENTRY_FIELDS
from calibration.rules import RECORD_CATEGORIES
from config.api import UTCDateTimeField

DECISION_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
SUBGROUP_ATTRIBUTES = ("gender", "age_group", "ethnicity")
SUBGROUP_VALUE_MAX = 256
CUSTOM_KEYS_MAX = 32


class StrictCharField(serializers.CharField):
    """A JSON string and nothing else (numbers and booleans are a type error, C2)."""

    default_error_messages = {"invalid": "Must be a string."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        value = super().to_internal_value(data)
        if not self.allow_blank and not value.strip():
            self.fail("blank")
        return value


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


class LateOutcomeInput(serializers.Serializer):
    """POST /log {"decision_id", "outcome"} and nothing else: a later ground truth."""

    decision_id = StrictCharField(max_length=m.ID_MAX)
    outcome = StrictCharField(max_length=m.VALUE_MAX)


class DecisionOutput(serializers.Serializer):
    decision_id = serializers.CharField()
    user_id = serializers.CharField()
    model_id = serializers.CharField(allow_null=True)
    model_version = serializers.CharField(allow_null=True)
    ai_recommendation = serializers.CharField()
    ai_confidence = serializers.FloatField(allow_null=True)
    user_decision = serializers.CharField()
    initial_decision = serializers.CharField(allow_null=True)
    outcome = serializers.CharField(allow_null=True)
    context = serializers.CharField(allow_blank=True)  # type: ignore[assignment]
    subgroups = serializers.DictField()
    metadata = serializers.DictField()
    timestamp = UTCDateTimeField()
    logged_at = UTCDateTimeField()
    followed_ai = serializers.BooleanField()
    calibration_category = serializers.ChoiceField(choices=RECORD_CATEGORIES)
    entry_id = serializers.CharField()
    sequence = serializers.IntegerField()
    hash = serializers.CharField()
    previous_hash = serializers.CharField()


class AuditEntryOutput(serializers.Serializer):
    """An entry of GET /audit-trail: the document that is hashed (C5)."""

    entry_id = serializers.CharField()
    sequence = serializers.IntegerField()
    type = serializers.ChoiceField(choices=["decision", "outcome"])
    decision_id = serializers.CharField()
    timestamp = serializers.CharField()
    logged_at = serializers.CharField()
    user_id = serializers.CharField()
    model_id = serializers.CharField(allow_null=True)
    model_version = serializers.CharField(allow_null=True)
    ai_recommendation = serializers.CharField()
    ai_confidence = serializers.FloatField(allow_null=True)
    user_decision = serializers.CharField()
    followed_ai = serializers.BooleanField()
    calibration_category = serializers.ChoiceField(choices=RECORD_CATEGORIES)
    outcome = serializers.CharField(allow_null=True)
    context = serializers.CharField(allow_blank=True)  # type: ignore[assignment]
    subgroups = serializers.DictField()
    hash = serializers.CharField()
    previous_hash = serializers.CharField()


assert list(AuditEntryOutput().fields) == ENTRY_FIELDS


class VerifyOutput(serializers.Serializer):
    valid = serializers.BooleanField()
    entries_checked = serializers.IntegerField()
    head_hash = serializers.CharField()
    first_invalid_sequence = serializers.IntegerField(allow_null=True)
