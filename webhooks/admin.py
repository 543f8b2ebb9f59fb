"""Staff views of webhooks and deliveries. Secrets are never shown here."""

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from config.exceptions import DomainError
from webhooks import services, validation
from webhooks.models import Delivery, DeliveryAttempt, Webhook


class WebhookForm(forms.ModelForm):
    """Staff edits go through the same URL and event rules as the API (docs/reference/webhooks.md,
    "Subscriptions", "URL safety")."""

    class Meta:
        model = Webhook
        fields = ["url", "events", "description"]

    def clean_url(self) -> str:
        try:
            return validation.webhook_url_validate(self.cleaned_data.get("url"))
        except DomainError as exc:
            raise forms.ValidationError(exc.detail)

    def clean_events(self) -> list[str]:
        try:
            return validation.webhook_events_validate(self.cleaned_data.get("events"))
        except DomainError as exc:
            raise forms.ValidationError(exc.detail)


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    form = WebhookForm
    list_display = ["id", "customer", "url", "status", "events", "disabled_reason", "created_at"]
    list_filter = ["status", "disabled_reason"]
    search_fields = ["id", "url", "customer__id"]
    readonly_fields = [
        "id",
        "customer",
        "status",
        "disabled_reason",
        "disabled_at",
        "previous_secret_expires_at",
        "created_at",
        "updated_at",
    ]
    fields = [
        "id",
        "customer",
        "url",
        "events",
        "description",
        "status",
        "disabled_reason",
        "disabled_at",
        "previous_secret_expires_at",
        "created_at",
        "updated_at",
    ]
    actions = ["enable_webhooks"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # created through the API, which validates the URL and issues the secret

    def save_model(self, request: HttpRequest, obj: Webhook, form: forms.ModelForm, change: bool) -> None:
        obj.updated_at = timezone.now()
        super().save_model(request, obj, form, change)

    @admin.action(description="Enable the selected webhooks")
    def enable_webhooks(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        enabled = 0
        for webhook in queryset:
            try:
                services.webhook_enable(webhook=webhook)
                self.log_change(request, webhook, "Enabled")
                enabled += 1
            except DomainError as exc:
                self.message_user(request, f"{webhook.id}: {exc.detail}", messages.WARNING)
        self.message_user(request, f"{enabled} webhook(s) enabled.", messages.SUCCESS)


class DeliveryAttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    fields = ("attempt", "attempted_at", "response_status", "duration_ms", "error", "response_body")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Delivery | None = None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "webhook",
        "event_type",
        "status",
        "attempt_count",
        "next_attempt_at",
        "last_response_status",
        "created_at",
    ]
    list_filter = ["status", "event_type"]
    organisation_field = "webhook__customer"
    search_fields = ["id", "event__id", "webhook__id"]
    list_select_related = ["webhook"]
    readonly_fields = [
        "id",
        "webhook",
        "event",
        "event_type",
        "status",
        "attempt_count",
        "next_attempt_at",
        "claimed_until",
        "last_response_status",
        "created_at",
        "completed_at",
    ]
    exclude = ["claim_token"]
    inlines = [DeliveryAttemptInline]
    actions = ["retry_now"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Retry now")
    def retry_now(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        count = 0
        for delivery in queryset:
            services.delivery_retry_now(delivery=delivery)
            self.log_change(request, delivery, "Scheduled for an attempt now")
            count += 1
        self.message_user(
            request,
            f"{count} deliveries scheduled for an attempt now "
            "(a disabled webhook's deliveries wait until it is enabled).",
            messages.SUCCESS,
        )
