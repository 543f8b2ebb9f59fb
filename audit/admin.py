"""Staff views of decisions and the audit trail: read-only (the trail is append-only and a
changed row would break the chain), with a "verify chain" action."""

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from django.contrib import admin, messages
from django.contrib.admin import DateFieldListFilter
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.timesince import timesince

from audit import (
    admin_erasure,  # noqa: F401 (registers Access -> Erasures)
    admin_retention,  # noqa: F401 (registers Access -> Retention policies)
)
from audit.checkpoints import checkpoint_make
from audit.exceptions import TreeNotExtension
from audit.models import AuditEntry, ChainHead, Decision, SignedCheckpoint
from audit.verify import chain_verify_incremental
from config.admin import (
    FieldsNeedPermission,
    ReadOnlyAdmin,
    badge,
    count_column,
    input_filter,
    reviewer_column,
    when,
    when_stacked,
)
from keys.models import Customer

if TYPE_CHECKING:  # django-stubs' name for what a list filter entry may be
    from django.contrib.admin.options import _ListFilterT

# Review times and probes per decision are oversight figures of one person: shown only to staff who
# may see them per reviewer (docs/reference/oversight.md, "Who sees what"). A format-2 entry's
# canonical text holds both, so it is hidden with them.
PER_PERSON_PERMISSION = "oversight.view_reviewer_figures"
DECISION_OVERSIGHT_FIELDS = ("review_started_at", "review_seconds", "probe", "probe_kind", "probe_corrected")
ENTRY_OVERSIGHT_FIELDS = ("review_seconds", "probe", "canonical")

TRAIL_FILTERS: list["_ListFilterT"] = [
    "customer",
    input_filter("user_id", "user id"),
    input_filter("model_id", "model id"),
    "calibration_category",
    ("timestamp", DateFieldListFilter),
]


class AnnotatedHead(Protocol):
    """A ChainHead as its admin's get_queryset annotates it: the size and time of its newest
    checkpoint (None before the first), which the model does not declare."""

    sequence: int
    checkpoint_size: int | None
    checkpoint_at: dt.datetime | None


def verify_chains(model_admin: admin.ModelAdmin, request: HttpRequest, customers: Iterable[Customer]) -> None:
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
class DecisionAdmin(FieldsNeedPermission, ReadOnlyAdmin):
    guarded_fields = DECISION_OVERSIGHT_FIELDS
    guarded_permission = PER_PERSON_PERMISSION
    list_display = [
        "decision_id",
        "customer",
        "reviewer",
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
    reviewer = reviewer_column()
    readonly_fields = ["reviewer_page"]
    reviewer_page = reviewer_column("reviewer's page")

    def get_list_display(self, request: HttpRequest) -> list[str | Callable[[AuditEntry], str | bool]]:
        """Probes marked in the list for staff who may see them (a per-person figure)."""
        columns = list(super().get_list_display(request))
        return [*columns, "probe_mark"] if request.user.has_perm(PER_PERSON_PERMISSION) else columns

    @admin.display(description="probe", ordering="probe_kind")
    def probe_mark(self, obj: Decision) -> str:
        return badge("acknowledged", f"probe: {obj.probe_kind.replace('_', ' ')}") if obj.probe_kind else ""


@admin.register(AuditEntry)
class AuditEntryAdmin(FieldsNeedPermission, ReadOnlyAdmin):
    guarded_fields = ENTRY_OVERSIGHT_FIELDS
    guarded_permission = PER_PERSON_PERMISSION
    list_display = [
        "sequence_count",
        "customer",
        "type",
        "decision_short",
        "reviewer",
        "model_id",
        "category",
        "decided",
        "logged",
        "erased",
        "short_hash",
    ]
    list_filter = [*TRAIL_FILTERS, "type", "erased"]
    search_fields = ["=decision_ref", "=user_id", "=customer__id", "=id"]
    ordering = ["customer", "-sequence"]
    list_select_related = ["customer"]
    actions = ["verify_chain"]
    sequence_count = count_column("sequence")
    reviewer = reviewer_column()

    @admin.display(description="decision", ordering="decision_ref")
    def decision_short(self, obj: AuditEntry) -> str:
        """A decision id of up to 14 characters as it is; a longer one (an import's, a drift
        monitor's entry) cut, whole in its title, so the list keeps its columns on screen."""
        ref = obj.decision_ref or ""
        return ref if len(ref) <= 14 else format_html('<span title="{}">{}…</span>', ref, ref[:13])

    # The list fits a 1,400 px screen: the category under a one-word heading, each time as its
    # day over its minute (never broken inside), the hash cut to 10 characters.
    @admin.display(description="category", ordering="calibration_category")
    def category(self, obj: AuditEntry) -> str:
        return obj.get_calibration_category_display()

    @admin.display(description="timestamp", ordering="timestamp")
    def decided(self, obj: AuditEntry) -> str:
        return when_stacked(obj.timestamp)

    @admin.display(description="logged at", ordering="logged_at")
    def logged(self, obj: AuditEntry) -> str:
        return when_stacked(obj.logged_at)

    @admin.display(description="hash")
    def short_hash(self, obj: AuditEntry) -> str:
        return format_html('<span title="{}">{}…</span>', obj.hash, obj.hash[:10])

    @admin.action(
        description="Verify the audit chain of the selected entries' customers", permissions=["view"]
    )
    def verify_chain(self, request: HttpRequest, queryset: QuerySet[AuditEntry]) -> None:
        customers = {entry.customer_id: entry.customer for entry in queryset.select_related("customer")}
        verify_chains(self, request, [customers[k] for k in sorted(customers)])


@admin.register(ChainHead)
class ChainHeadAdmin(ReadOnlyAdmin):
    """The audit page: one row per customer's chain, with its latest signed checkpoint and
    how old it is (docs/reference/checkpoints.md), and a "make a checkpoint now" action."""

    list_display = [
        "customer",
        "sequence_count",
        "decisions_count",
        "latest_checkpoint",
        "checkpoint_age",
        "short_head",
        "updated_at",
    ]
    actions = ["verify_chain", "make_checkpoint"]
    sequence_count = count_column("sequence", "entries")
    decisions_count = count_column("decisions")

    def get_queryset(self, request: HttpRequest) -> QuerySet[ChainHead]:
        newest = SignedCheckpoint.objects.filter(customer=OuterRef("customer")).order_by("-sequence")
        heads: QuerySet[ChainHead] = super().get_queryset(request)
        return heads.annotate(
            checkpoint_size=Subquery(newest.values("sequence")[:1]),
            checkpoint_at=Subquery(newest.values("created_at")[:1]),
        )

    @admin.display(description="latest checkpoint", ordering="checkpoint_size")
    def latest_checkpoint(self, obj: "AnnotatedHead") -> str:
        if obj.checkpoint_size is None:
            return "none yet"
        behind = obj.sequence - obj.checkpoint_size
        return f"{obj.checkpoint_size:,} entries" + (f" ({behind:,} newer not yet signed)" if behind else "")

    @admin.display(description="checkpoint age", ordering="checkpoint_at")
    def checkpoint_age(self, obj: "AnnotatedHead") -> str:
        if obj.checkpoint_at is None:
            return "-"
        return f"{timesince(obj.checkpoint_at)} ago ({when(obj.checkpoint_at)})"

    @admin.display(description="head hash", ordering="head_hash")
    def short_head(self, obj: ChainHead) -> str:
        return f"{obj.head_hash[:16]}…"

    @admin.action(description="Verify the audit chain of the selected customers", permissions=["view"])
    def verify_chain(self, request: HttpRequest, queryset: QuerySet[ChainHead]) -> None:
        verify_chains(self, request, [head.customer for head in queryset.select_related("customer")])

    @admin.action(description="Make a checkpoint now for the selected customers", permissions=["view"])
    def make_checkpoint(self, request: HttpRequest, queryset: QuerySet[ChainHead]) -> None:
        for head in queryset.select_related("customer"):
            try:
                made = checkpoint_make(customer=head.customer)
            except TreeNotExtension as exc:
                self.message_user(request, f"{head.customer_id}: {exc.detail}", messages.ERROR)
                continue
            if made.checkpoint is None:
                self.message_user(
                    request, f"{head.customer_id}: the chain is empty, nothing to sign.", messages.WARNING
                )
                continue
            what = (
                "Signed a checkpoint"
                if made.created
                else "The chain has not grown since the latest checkpoint"
            )
            self.message_user(
                request,
                f"{head.customer_id}: {what} at {made.checkpoint.sequence:,} entries ({made.checkpoint.pk}).",
            )
            if made.created:
                self.log_change(request, head.customer, f"Made checkpoint {made.checkpoint.pk}")


@admin.register(SignedCheckpoint)
class SignedCheckpointAdmin(ReadOnlyAdmin):
    # The root's first characters: the full hash (on the checkpoint's page) pushed the last column
    # off a laptop's screen; the search still takes the whole of it.
    list_display = ["id", "customer", "entries", "short_root", "created_at"]
    list_filter = ["customer"]
    search_fields = ["id", "root_hash", "head_hash"]
    ordering = ["-created_at"]

    @admin.display(description="covers entries", ordering="sequence")
    def entries(self, obj: SignedCheckpoint) -> str:
        return f"1 to {obj.sequence:,}"

    @admin.display(description="root hash")
    def short_root(self, obj: SignedCheckpoint) -> str:
        return obj.root_hash[:16] + "…"
