"""Staff administration of API keys. Create, rotate and revoke call the same services as the API
(recorded in the admin audit log with the staff user); a new key value is shown once, on the page
that answers the request, and is stored nowhere (not in a message, not in the session)."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils import timezone

from config.models import WorkerHeartbeat
from config.scopes import ALL_SCOPES
from keys import services
from keys.exceptions import ApiKeyNotActive
from keys.models import CUSTOMER_ID_HELP, CUSTOMER_ID_PATTERN, AdminAuditLog, ApiKey, Customer, Tier


def _actor(request: HttpRequest) -> services.AdminActor:
    return services.AdminActor(key_id=None, user=f"staff:{request.user.get_username()}")


class CreateKeyForm(forms.Form):
    customer_id = forms.RegexField(
        regex=CUSTOMER_ID_PATTERN,
        max_length=64,
        help_text=f"The organisation the key acts for (created if new): {CUSTOMER_ID_HELP}.",
    )
    tier = forms.ChoiceField(choices=Tier.choices, help_text="Sets the rate limits.")
    description = forms.CharField(required=False, max_length=255, help_text="Who uses it, for what.")
    is_admin = forms.BooleanField(
        required=False, label="Admin key", help_text="May create, rotate and revoke keys through the API."
    )
    scopes = forms.MultipleChoiceField(
        choices=[(scope, scope) for scope in ALL_SCOPES],
        initial=list(ALL_SCOPES),
        widget=forms.CheckboxSelectMultiple,
        help_text="What the key may do: ingest (log decisions, calibrate, detect bias, fairness "
        "signals), read (every GET, trust scores, exports), manage (webhooks, erasures, the "
        "retention policy and legal hold, system profiles, alert status, checkpoints).",
    )


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=1000, help_text="Recorded in the admin audit log.")


class EffectiveStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "effective_status"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [(s, s) for s in ("active", "rotated", "revoked", "expired")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> QuerySet[ApiKey]:
        value = self.value()
        now = timezone.now()
        if value == "expired":
            return queryset.filter(status=ApiKey.Status.ROTATED, expires_at__lte=now)
        if value == "rotated":
            return queryset.filter(status=ApiKey.Status.ROTATED, expires_at__gt=now)
        if value:
            return queryset.filter(status=value)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "prefix",
        "customer",
        "tier",
        "is_admin",
        "scopes",
        "effective_status",
        "created_at",
        "last_used",
        "expires_at",
    ]
    list_filter = [EffectiveStatusFilter, "tier", "is_admin", "customer"]
    search_fields = ["id", "prefix", "customer__id", "description"]
    readonly_fields = [
        "id",
        "prefix",
        "customer",
        "tier",
        "is_admin",
        "scopes",
        "status",
        "created_at",
        "expires_at",
        "revoked_at",
        "revoke_reason",
        "replaced_by",
        "last_used",
    ]
    fields = [*readonly_fields[:6], "description", *readonly_fields[6:]]
    exclude = ["digest"]
    actions = ["revoke_keys", "rotate_keys"]
    ordering = ["-created_at"]

    @admin.display(description="status")
    def effective_status(self, obj: ApiKey) -> str:
        return obj.effective_status()

    def has_delete_permission(self, request: HttpRequest, obj: ApiKey | None = None) -> bool:
        return False

    def get_urls(self) -> list[URLPattern]:
        return [
            path("new/", self.admin_site.admin_view(self.create_view), name="keys_apikey_create"),
            *super().get_urls(),
        ]

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, object] | None = None
    ) -> HttpResponseRedirect:
        return redirect("admin:keys_apikey_create")

    def create_view(self, request: HttpRequest) -> HttpResponse:
        """Create a key through the keys service; its value is on this response only (never in
        a message, the session or the database)."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = CreateKeyForm(request.POST or None)
        issued = None
        if request.method == "POST" and form.is_valid():
            issued = services.api_key_create(**form.cleaned_data, actor=_actor(request))
            self.log_addition(request, issued.key, "Created through the staff console")
        context = {**self.admin_site.each_context(request), "title": "Create an API key", "form": form,
                   "issued": [issued] if issued else [], "opts": self.model._meta}  # fmt: skip
        return TemplateResponse(request, "keys/admin/create_key.html", context)

    @admin.action(description="Revoke selected keys (with a reason)", permissions=["change"])
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> TemplateResponse | None:
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if not form.is_valid():
            context = {**self.admin_site.each_context(request), "title": "Revoke API keys", "form": form,
                       "keys": list(queryset), "opts": self.model._meta}  # fmt: skip
            return TemplateResponse(request, "keys/admin/revoke_keys.html", context)
        done = 0
        for key in queryset:
            try:
                services.api_key_revoke(key=key, reason=form.cleaned_data["reason"], actor=_actor(request))
            except ApiKeyNotActive as exc:
                self.message_user(request, exc.detail, messages.WARNING)
                continue
            self.log_change(request, key, f"Revoked: {form.cleaned_data['reason']}")
            done += 1
        self.message_user(request, f"Revoked {done} key(s).", messages.SUCCESS)
        return None

    @admin.action(description="Rotate selected keys (old key valid 24 h)", permissions=["change"])
    def rotate_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> TemplateResponse | None:
        issued = []
        for key in queryset:
            try:
                issued.append(services.api_key_rotate(key=key, actor=_actor(request)))
            except ApiKeyNotActive as exc:
                self.message_user(request, exc.detail, messages.WARNING)
                continue
            self.log_change(request, key, f"Rotated; replaced by {issued[-1].key.id}")
        if not issued:
            return None
        # The new values are shown on this response only, never in a message or the session.
        context = {**self.admin_site.each_context(request), "title": "Rotated API keys", "issued": issued,
                   "opts": self.model._meta}  # fmt: skip
        return TemplateResponse(request, "keys/admin/create_key.html", context)


@admin.register(AdminAuditLog)
class AdminAuditLogAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "action",
        "key_id",
        "new_key_id",
        "customer_id",
        "tier",
        "admin_key_id",
        "admin_user",
        "reason",
    ]
    list_filter = ["action", "tier"]
    search_fields = ["key_id", "new_key_id", "customer_id", "admin_user"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AdminAuditLog | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AdminAuditLog | None = None) -> bool:
        return False


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = ["id", "created_at"]
    search_fields = ["id"]

    def has_delete_permission(self, request: HttpRequest, obj: Customer | None = None) -> bool:
        return False


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["hostname", "last_seen", "started_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
