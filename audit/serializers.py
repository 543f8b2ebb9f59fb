"""Output shapes of POST /log, POST /calibrate and GET /audit-trail (the decision input is
audit/inputs.py)."""

from rest_framework import serializers

from audit.categories import RECORD_CATEGORIES
from audit.fields import DECISION_OUTPUT_FIELDS, ENTRY_DOCUMENT_FIELDS
from audit.models import AuditEntry, VerifyJob
from config.api import UTCDateTimeField


class ProbeOutput(serializers.Serializer[dict[str, object]]):
    kind = serializers.ChoiceField(choices=["known_wrong", "known_right"])
    correct_decision = serializers.CharField()


class DecisionOutput(serializers.Serializer[dict[str, object]]):
    decision_id = serializers.CharField()
    user_id = serializers.CharField()
    subject_id = serializers.CharField(
        allow_null=True, help_text="The person the decision is about (docs/reference/erasure.md)"
    )
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
    review_started_at = UTCDateTimeField(allow_null=True)
    review_seconds = serializers.FloatField(allow_null=True)
    probe = ProbeOutput(allow_null=True)
    timestamp = UTCDateTimeField()
    logged_at = UTCDateTimeField()
    followed_ai = serializers.BooleanField()
    calibration_category = serializers.ChoiceField(choices=RECORD_CATEGORIES)
    entry_id = serializers.CharField()
    sequence = serializers.IntegerField()
    hash = serializers.CharField()
    previous_hash = serializers.CharField()


assert list(DecisionOutput().fields) == DECISION_OUTPUT_FIELDS


class AuditEntryOutput(serializers.Serializer[dict[str, object]]):
    """An entry of GET /audit-trail: the document that is hashed (docs/reference/decisions.md).
    A format-2 entry (docs/reference/erasure.md) also carries the fields of
    AuditEntryFormat2Output; once erased its personal fields are null, and an `erasure` entry
    shows its own fields instead of a decision's."""

    _DECISION = "Absent on an `erasure` entry"
    _PERSONAL = "Personal: null once erased (docs/reference/erasure.md)"

    entry_id = serializers.CharField()
    sequence = serializers.IntegerField()
    type = serializers.ChoiceField(choices=AuditEntry.Type.choices)
    decision_id = serializers.CharField(required=False, help_text=_DECISION)
    timestamp = serializers.CharField(required=False, help_text=_DECISION)
    logged_at = serializers.CharField()
    user_id = serializers.CharField(required=False, allow_null=True, help_text=_PERSONAL)
    model_id = serializers.CharField(required=False, allow_null=True)
    model_version = serializers.CharField(required=False, allow_null=True)
    ai_recommendation = serializers.CharField(required=False, help_text=_DECISION)
    ai_confidence = serializers.FloatField(required=False, allow_null=True)
    user_decision = serializers.CharField(required=False, help_text=_DECISION)
    followed_ai = serializers.BooleanField(required=False, help_text=_DECISION)
    calibration_category = serializers.ChoiceField(
        choices=RECORD_CATEGORIES, required=False, help_text=_DECISION
    )
    outcome = serializers.CharField(required=False, allow_null=True)
    context = serializers.CharField(required=False, allow_blank=True, allow_null=True, help_text=_PERSONAL)  # type: ignore[assignment]
    subgroups = serializers.DictField(required=False, allow_null=True, help_text=_PERSONAL)
    hash = serializers.CharField()
    previous_hash = serializers.CharField()
    subject_id = serializers.CharField(
        required=False, allow_null=True, help_text="The person the decision is about (personal; format 2)"
    )
    review_seconds = serializers.FloatField(
        required=False, help_text="Only on the entries of decisions that carry it (then hashed)"
    )
    probe = ProbeOutput(required=False, help_text="Only on the entries of vigilance probes (then hashed)")
    initial_decision = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="The reviewer's decision before seeing the AI's: on every entry appended since it "
        "was hashed (null when none was recorded); absent on older entries, whose hash does not cover it",
    )


assert list(AuditEntryOutput().fields) == ENTRY_DOCUMENT_FIELDS


class AuditEntryFormat2Output(AuditEntryOutput):
    """A format-2 entry (docs/reference/erasure.md, "Entry format 2"): the fields above (the
    personal ones null once erased; an `erasure` entry shows its own fields instead of a
    decision's) and these."""

    format = serializers.IntegerField(required=False, help_text="2 (absent on a format-1 entry)")
    canonical = serializers.CharField(
        required=False, help_text="The exact RFC 8785 text `hash` covers (its SHA-256)"
    )
    personal = serializers.CharField(
        required=False, help_text="hex HMAC-SHA256(salt, JCS of personal_fields), inside `canonical`"
    )
    personal_fields = serializers.DictField(
        required=False, allow_null=True, help_text="context, subgroups, subject_id, user_id; null once erased"
    )
    salt = serializers.CharField(required=False, allow_null=True, help_text="hex, 32 bytes; null once erased")
    erased = serializers.BooleanField(required=False)


class VerifyOutput(serializers.Serializer[dict[str, object]]):
    valid = serializers.BooleanField()
    entries_checked = serializers.IntegerField(
        help_text="Entries verified: those checked by earlier calls and those rechecked by this one"
    )
    head_hash = serializers.CharField()
    first_invalid_sequence = serializers.IntegerField(allow_null=True)
    checkpoints_checked = serializers.IntegerField(
        help_text="Signed checkpoints checked against the chain, by earlier calls and this one"
    )
    first_invalid_checkpoint = serializers.IntegerField(
        allow_null=True, help_text="The size (sequence) of the first checkpoint the chain does not match"
    )
    erased_entries = serializers.IntegerField(
        help_text="Entries whose personal part was erased (docs/reference/erasure.md)"
    )


class VerifyJobOutput(serializers.Serializer[VerifyJob]):
    """`?full=true`: 202 with the job; `?job_id=`: 200 with it, `result` once completed."""

    job_id = serializers.CharField(source="id")
    status = serializers.ChoiceField(choices=["queued", "running", "completed", "failed"])
    created_at = UTCDateTimeField()
    completed_at = UTCDateTimeField(allow_null=True)
    result = VerifyOutput(allow_null=True)
