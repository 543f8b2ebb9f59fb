"""Erasures in the staff console (Access -> Erasures; docs/reference/erasure.md): the list with
each erasure's status, its page, and a "request an erasure" form that validates like
POST /erasures and calls the same service. Every request is recorded in the console's log of
actions with the staff user, never with the erased value; no page shows that value (the form
takes it and forgets it once the erasure has run)."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.html import format_html

from audit import erasure as erasures
from audit.erasure_inputs import ErasureInput
from audit.exceptions import ErasureLegalHold
from audit.models_erasure import LEGAL_BASIS_NAMES, Erasure
from config.admin import ReadOnlyAdmin, badge, count_column, request_page, when_stacked
from config.admin_scope import scope_form
from config.bodymodels import body_parse
from config.exceptions import DomainError
from keys.models import Customer

TARGETS = [
    ("subject_id", "The person the decisions are about (subject_id)"),
    ("user_id", "A reviewer (user_id)"),
]


class ErasureRequestForm(forms.Form):
    customer = forms.ModelChoiceField(queryset=Customer.objects.order_by("pk"))
    target = forms.ChoiceField(choices=TARGETS, widget=forms.RadioSelect, initial="subject_id", label="Erase")
    value = forms.CharField(
        label="Their id",
        help_text="The subject_id or user_id exactly as the decisions were logged with it.",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="Why (1-500 characters).")
    legal_basis = forms.ChoiceField(
        choices=[(code, LEGAL_BASIS_NAMES[code]) for code in erasures.LEGAL_BASES]
    )
    override_minimum = forms.BooleanField(
        required=False,
        label="Erase now even within the minimum retention",
        help_text="Otherwise entries younger than the policy's minimum retention are erased when they reach it.",
    )

    def body(self) -> dict:
        data = self.cleaned_data
        return {
            data["target"]: data["value"],
            "reason": data["reason"],
            "legal_basis": data["legal_basis"],
            "override_minimum": data["override_minimum"],
        }


def basis_name(code: str) -> str:
    """A legal basis by its label ("GDPR Art. 17(1)(a): no longer necessary"), never its code."""
    return LEGAL_BASIS_NAMES.get(code, code)


class LegalBasisFilter(admin.SimpleListFilter):
    title = "legal basis"
    parameter_name = "legal_basis"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return list(LEGAL_BASIS_NAMES.items())

    def queryset(self, request: HttpRequest, queryset: QuerySet[Erasure]) -> QuerySet[Erasure]:
        return queryset.filter(legal_basis=self.value()) if self.value() else queryset


@admin.register(Erasure)
class ErasureAdmin(ReadOnlyAdmin):
    # At 1,400 px: times as their day over their minute, the scheduled time folded into "done".
    list_display = [
        "id",
        "customer",
        "state",
        "target",
        "basis",
        "entries_count",
        "requested_by",
        "requested",
        "done",
    ]
    list_filter = ["status", LegalBasisFilter, "target", "customer", "created_at"]
    search_fields = ["=id", "=customer__id"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]
    list_select_related = ["customer"]
    entries_count = count_column("entries")
    # Never the value itself (kept only while scheduled) nor its keyed digest.
    # The organisation as text: its own page (Access -> Customers) is for superusers only.
    fields = readonly_fields = (
        "id",
        "organisation",
        "state",
        "target",
        "basis",
        "reason",
        "override_minimum",
        "entries",
        "affected",
        "pseudonym",
        "entry_sequence",
        "requested_by",
        "created_at",
        "execute_after",
        "completed_at",
    )

    def has_add_permission(self, request: HttpRequest, obj: Erasure | None = None) -> bool:
        return request.user.has_perm("audit.add_erasure")

    @admin.display(description="status", ordering="status")
    def state(self, erasure: Erasure) -> str:
        return badge(erasure.status)

    @admin.display(description="sequences erased")
    def affected(self, erasure: Erasure) -> str:
        runs = [f"{a:,}" if a == b else f"{a:,}-{b:,}" for a, b in erasure.sequences or []]
        return ", ".join(runs) or "-"

    @admin.display(description="legal basis", ordering="legal_basis")
    def basis(self, erasure: Erasure) -> str:
        return basis_name(erasure.legal_basis)

    @admin.display(description="organisation", ordering="customer")
    def organisation(self, erasure: Erasure) -> str:
        return str(erasure.customer_id)

    @admin.display(description="requested", ordering="created_at")
    def requested(self, erasure: Erasure) -> str:
        return when_stacked(erasure.created_at)

    @admin.display(description="done", ordering="completed_at")
    def done(self, erasure: Erasure) -> str:
        if erasure.completed_at is not None:
            return when_stacked(erasure.completed_at)
        if erasure.status == Erasure.Status.SCHEDULED and erasure.execute_after is not None:
            return format_html("due {}", when_stacked(erasure.execute_after))
        return "-"

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, object] | None = None
    ) -> HttpResponse:
        """Request an erasure: the same validation and service as POST /erasures."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = scope_form(request, ErasureRequestForm(request.POST or None))
        if request.method == "POST" and form.is_valid():
            try:
                result = self._request(request, form)
            except DomainError as exc:
                form.add_error(None, "; ".join([exc.detail, *(e["message"] for e in exc.errors or [])]))
            else:
                if result is not None:
                    return redirect("admin:audit_erasure_change", result.pk)
        return request_page(
            self, request, title="Request an erasure", form=form, template="admin/audit/erasure/request.html"
        )

    def _request(self, request: HttpRequest, form: ErasureRequestForm) -> Erasure | None:
        data = body_parse(ErasureInput, form.body())
        target, value = data.target()
        try:
            result = erasures.erasure_request(
                customer=form.cleaned_data["customer"],
                target=target,
                value=value,
                reason=data.reason,
                legal_basis=data.legal_basis,
                override_minimum=data.override_minimum,
                requested_by=f"staff:{request.user.get_username()}",
            )
        except ErasureLegalHold as exc:
            refused = Erasure.objects.get(pk=exc.erasure_id)
            self.log_addition(request, refused, "Erasure refused: the audit trail is under legal hold")
            messages.error(request, exc.detail)
            return refused
        erasure = result.erasure
        if not result.created:
            self.log_change(request, erasure, "Erasure requested again: nothing more to erase")
            messages.warning(
                request, f"Nothing more to erase: {erasure.pk} already did ({erasure.entries} entries)."
            )
            return erasure
        self.log_addition(request, erasure, f"Erasure {erasure.status} ({basis_name(erasure.legal_basis)})")
        if erasure.status == Erasure.Status.SCHEDULED:
            messages.success(
                request,
                f"Erasure {erasure.pk} scheduled: {erasure.entries} entries are erased once they reach the "
                f"minimum retention, on {erasure.execute_after:%Y-%m-%d %H:%M} UTC.",
            )
        else:
            messages.success(request, f"Erasure {erasure.pk} completed: {erasure.entries} entries erased.")
        return erasure
