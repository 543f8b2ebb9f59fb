"""Staff views of decisions and the audit trail: read-only (the trail is append-only and a
changed row would break the chain), with a "verify chain" action."""

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import DateFieldListFilter
from django.db.models import QuerySet
from django.http import HttpRequest

from audit.models import AuditEntry, ChainHead, Decision
from audit.verify import chain_verify_incremental
from config.admin import ReadOnlyAdmin, input_filter

TRAIL_FILTERS: list[Any] = [
    "customer",
    input_filter("user_id", "user id"),
    input_filter("model_id", "model id"),
    "calibration_category",
    ("timestamp", DateFieldListFilter),
]


def verify_chains(model_admin: admin.ModelAdmin, request: HttpRequest, customers) -> None:
    """Recheck the hash chain of each customer (from its last verified checkpoint, as
    GET /audit-trail/verify does) and report the result; a broken chain is an error message."""
    for customer in customers:
        result, _ = chain_verify_incremental(customer)
        if result.valid:
            model_admin.message_user(
                request,
                f"Audit chain of {customer.pk} is intact: {result.entries_checked} entries, "
                f"head hash {result.head_hash[:16]}…",
                messages.SUCCESS,
            )
        else:
            model_admin.message_user(
                request,
                f"Audit chain of {customer.pk} is BROKEN at entry {result.first_invalid_sequence} "
                f"({result.entries_checked} entries checked). Keep the database as it is and escalate.",
                messages.ERROR,
            )
        model_admin.log_change(request, customer, f"Verified the audit chain: valid={result.valid}")


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = [
        "decision_id",
        "customer",
        "user_id",
        "model_id",
        "ai_recommendation",
        "ai_confidence",
        "user_decision",
        "outcome",
        "calibration_category",
        "timestamp",
    ]
    list_filter = [*TRAIL_FILTERS, "followed_ai"]
    search_fields = ["=decision_id", "=user_id", "=model_id", "=customer__id"]
    date_hierarchy = "timestamp"
    ordering = ["-id"]
    list_select_related = ["customer"]


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = [
        "sequence",
        "customer",
        "type",
        "decision_ref",
        "user_id",
        "model_id",
        "calibration_category",
        "timestamp",
        "logged_at",
        "short_hash",
    ]
    list_filter = [*TRAIL_FILTERS, "type"]
    search_fields = ["=decision_ref", "=user_id", "=customer__id", "=id"]
    ordering = ["customer", "-sequence"]
    list_select_related = ["customer"]
    actions = ["verify_chain"]

    @admin.display(description="hash")
    def short_hash(self, obj: AuditEntry) -> str:
        return obj.hash[:12] + "…"

    @admin.action(
        description="Verify the audit chain of the selected entries' customers", permissions=["view"]
    )
    def verify_chain(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> None:
        customers = {entry.customer_id: entry.customer for entry in queryset.select_related("customer")}
        verify_chains(self, request, [customers[k] for k in sorted(customers)])


@admin.register(ChainHead)
class ChainHeadAdmin(ReadOnlyAdmin):
    list_display = ["customer", "sequence", "decisions", "head_hash", "updated_at"]
    actions = ["verify_chain"]

    @admin.action(description="Verify the audit chain of the selected customers", permissions=["view"])
    def verify_chain(self, request: HttpRequest, queryset: QuerySet[ChainHead]) -> None:
        verify_chains(self, request, [head.customer for head in queryset.select_related("customer")])
