"""Staff views of fairness signals (read-only) and amplification alerts, whose bulk actions call
the same service as PATCH /bias/amplification/:id and record the staff user as the actor."""

import json

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.html import format_html

from fairness import services
from fairness.models import AlertStatus, AlertStatusChange, AmplificationAlert, FairnessSignal


def _staff(request: HttpRequest) -> str:
    return f"staff:{request.user.get_username()}"


def _pretty(value) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


@admin.register(FairnessSignal)
class FairnessSignalAdmin(admin.ModelAdmin):
    list_display = ["id", "customer", "external_tool_id", "model_id", "metric_name", "metric_value",
                    "protected_attribute", "signal_timestamp", "ingested_at"]  # fmt: skip
    list_filter = ["external_tool_id", "metric_name", "passes_threshold", "protected_attribute"]
    search_fields = ["id", "model_id", "customer__id"]
    date_hierarchy = "signal_timestamp"
    ordering = ["-ingested_at"]
    exclude = ["raw_payload_json", "analysis"]
    readonly_fields = [
        "id", "customer", "external_tool_id", "external_tool_version", "model_id", "model_version", "metric_name",
        "metric_value", "threshold", "passes_threshold", "protected_attribute", "privileged_group",
        "unprivileged_group", "sample_size", "confidence_interval", "signal_timestamp", "ingested_at",
        "raw_payload_pretty", "analysis_pretty",
    ]  # fmt: skip

    @admin.display(description="raw payload")
    def raw_payload_pretty(self, obj: FairnessSignal) -> str:
        return _pretty(obj.raw_payload)

    @admin.display(description="analysis")
    def analysis_pretty(self, obj: FairnessSignal) -> str:
        return _pretty(obj.analysis)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class StatusChangeInline(admin.TabularInline):
    model = AlertStatusChange
    fields = ["at", "from_status", "to_status", "by", "notes"]
    readonly_fields = ["at", "from_status", "to_status", "by", "notes"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ResolveForm(forms.Form):
    resolution_notes = forms.CharField(widget=forms.Textarea, required=False, max_length=10000)


@admin.register(AmplificationAlert)
class AmplificationAlertAdmin(admin.ModelAdmin):
    list_display = ["id", "customer", "model_id", "protected_attribute", "amplification_score", "severity", "status",
                    "created_at", "resolved_by"]  # fmt: skip
    list_filter = ["status", "severity", "protected_attribute", "created_at"]
    search_fields = ["id", "signal__id", "model_id", "customer__id"]
    ordering = ["-created_at"]
    inlines = [StatusChangeInline]
    actions = ["acknowledge_alerts", "resolve_alerts", "mark_false_positive"]
    exclude = ["analysis"]
    readonly_fields = [
        "id", "customer", "signal", "model_id", "protected_attribute", "amplification_score", "risk_level",
        "severity", "status", "resolution_notes", "resolved_by", "resolved_at", "acknowledged_at", "created_at",
        "updated_at", "analysis_pretty",
    ]  # fmt: skip

    @admin.display(description="analysis")
    def analysis_pretty(self, obj: AmplificationAlert) -> str:
        return _pretty(obj.analysis)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def _apply(self, request: HttpRequest, queryset: QuerySet, status: str, notes: str | None = None) -> None:
        count = 0
        for alert in queryset:
            services.alert_status_update(
                alert=alert, status=status, actor=_staff(request), resolution_notes=notes,
                resolved_by=_staff(request) if status != AlertStatus.ACKNOWLEDGED else None,
            )  # fmt: skip
            count += 1
        self.message_user(request, f"{count} alert(s) set to {status}.", messages.SUCCESS)

    @admin.action(description="Acknowledge selected alerts")
    def acknowledge_alerts(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._apply(request, queryset, AlertStatus.ACKNOWLEDGED)

    @admin.action(description="Resolve selected alerts (with notes)")
    def resolve_alerts(self, request: HttpRequest, queryset: QuerySet):
        if "apply" in request.POST:
            form = ResolveForm(request.POST)
            if form.is_valid():
                self._apply(
                    request, queryset, AlertStatus.RESOLVED, form.cleaned_data["resolution_notes"] or None
                )
                return None
        else:
            form = ResolveForm()
        context = {**self.admin_site.each_context(request), "title": "Resolve amplification alerts",
                   "alerts": list(queryset), "form": form, "opts": self.model._meta}  # fmt: skip
        return TemplateResponse(request, "fairness/admin/resolve_alerts.html", context)

    @admin.action(description="Mark selected alerts as false positives")
    def mark_false_positive(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._apply(request, queryset, AlertStatus.FALSE_POSITIVE)
