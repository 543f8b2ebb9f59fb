"""Staff administration of API keys. Actions call the same services as the API, and a
new key value is shown once, in the admin message, never stored."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from config.models import WorkerHeartbeat
from keys import services
from keys.exceptions import ApiKeyNotActive
from keys.models import AdminAuditLog, ApiKey, Customer


def _actor(request: HttpRequest) -> services.AdminActor:
    return services.AdminActor(key_id=None, user=f"staff:{request.user.get_username()}")


class EffectiveStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "effective_status"

    def lookups(self, request, model_admin):
        return [(s, s) for s in ("active", "rotated", "revoked", "expired")]

    def queryset(self, request, queryset):
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
        "status",
        "created_at",
        "expires_at",
        "revoked_at",
        "revoke_reason",
        "replaced_by",
        "last_used",
    ]
    fields = [*readonly_fields[:5], "description", *readonly_fields[5:]]
    exclude = ["digest"]
    actions = ["revoke_keys", "rotate_keys"]
    ordering = ["-created_at"]

    @admin.display(description="status")
    def effective_status(self, obj: ApiKey) -> str:
        return obj.effective_status()

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Keys are created through the API or `manage.py create_api_key` so the value can be shown once.
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.action(description="Revoke selected keys (immediately)")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        done = 0
        for key in queryset:
            try:
                services.api_key_revoke(key=key, reason="revoked in the admin", actor=_actor(request))
                done += 1
            except ApiKeyNotActive as exc:
                self.message_user(request, exc.detail, messages.WARNING)
        self.message_user(request, f"Revoked {done} key(s).", messages.SUCCESS)

    @admin.action(description="Rotate selected keys (old key valid 24 h)")
    def rotate_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset:
            try:
                issued = services.api_key_rotate(key=key, actor=_actor(request))
            except ApiKeyNotActive as exc:
                self.message_user(request, exc.detail, messages.WARNING)
                continue
            self.message_user(
                request,
                f"{key.id} rotated; new key {issued.key.id} (shown once, copy it now): {issued.value}",
                messages.SUCCESS,
            )


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

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = ["id", "created_at"]
    search_fields = ["id"]

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["hostname", "last_seen", "started_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
