"""Staff views of decisions and the audit trail: read-only (the trail is append-only and a
changed row would break the chain)."""

from django.contrib import admin

from audit.models import AuditEntry, ChainHead, Decision
from config.admin import ReadOnlyAdmin


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = [
        "decision_id",
        "customer",
        "user_id",
        "model_id",
        "ai_recommendation",
        "user_decision",
        "ai_confidence",
        "outcome",
        "calibration_category",
        "timestamp",
    ]
    list_filter = ["calibration_category", "followed_ai", "model_id"]
    search_fields = ["=decision_id", "=user_id", "=model_id", "=customer__id"]
    date_hierarchy = "timestamp"
    ordering = ["-id"]


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "customer",
        "sequence",
        "type",
        "decision_ref",
        "user_id",
        "calibration_category",
        "logged_at",
    ]
    list_filter = ["type", "calibration_category"]
    search_fields = ["=decision_ref", "=user_id", "=customer__id", "=id"]
    ordering = ["customer", "-sequence"]


@admin.register(ChainHead)
class ChainHeadAdmin(ReadOnlyAdmin):
    list_display = ["customer", "sequence", "decisions", "head_hash", "updated_at"]
