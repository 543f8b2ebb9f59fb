"""Staff views of fairness signals (read-only) and amplification alerts, whose bulk actions call
the same service as PATCH /bias/amplification/:id and record the staff user as the actor."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import ActionLocation
from django.contrib.admin.helpers import ActionForm
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

from config.admin import badge, when
from fairness import admin_display, services
from fairness.models import AlertStatus, AmplificationAlert, FairnessSignal


def _staff(request: HttpRequest) -> str:
    return f"staff:{request.user.get_username()}"


@admin.register(FairnessSignal)
class FairnessSignalAdmin(admin.ModelAdmin):
    list_display = ["id", "customer", "external_tool_id", "model_id", "metric_name", "metric_value",
                    "protected_attribute", "reported", "ingested"]  # fmt: skip
    list_filter = ["external_tool_id", "metric_name", "passes_threshold", "protected_attribute", "customer"]
    search_fields = ["id", "model_id", "customer__id"]
    date_hierarchy = "signal_timestamp"
    ordering = ["-ingested_at"]
    # The signal's figures in words, as on an alert's page; the tool's payload as it was sent is
    # kept verbatim and answered by GET /v1/model-fairness-signals/:id, not printed here.
    fieldsets = [
        ("Signal", {"fields": [("organisation", "model_id", "model_version"), ("external_tool_id", "external_tool_version"),
                               "metric", "groups", ("reported", "ingested")]}),
        ("Analysis", {"fields": ["analysis_figures", "group_rates"]}),
        ("Record", {"classes": ["collapse"], "fields": ["id"]}),
    ]  # fmt: skip
    readonly_fields = [
        "id", "organisation", "external_tool_id", "external_tool_version", "model_id", "model_version", "metric",
        "groups", "reported", "ingested", "analysis_figures", "group_rates",
    ]  # fmt: skip

    # The organisation's id, not a link: compliance staff have no page of customers to open.
    @admin.display(description="organisation", ordering="customer_id")
    def organisation(self, obj: FairnessSignal) -> str:
        return obj.customer_id

    @admin.display(description="metric")
    def metric(self, obj: FairnessSignal) -> str:
        return admin_display.signal_metric(obj)

    @admin.display(description="protected attribute")
    def groups(self, obj: FairnessSignal) -> str:
        return admin_display.signal_groups(obj)

    @admin.display(description="reported by the tool", ordering="signal_timestamp")
    def reported(self, obj: FairnessSignal) -> str:
        return when(obj.signal_timestamp)

    @admin.display(description="ingested", ordering="ingested_at")
    def ingested(self, obj: FairnessSignal) -> str:
        return when(obj.ingested_at)

    @admin.display(description="amplification analysis")
    def analysis_figures(self, obj: FairnessSignal) -> str:
        return admin_display.analysis_figures(obj.analysis)

    @admin.display(description="AI and human rates per group")
    def group_rates(self, obj: FairnessSignal) -> str:
        return admin_display.group_rates(obj.analysis)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class TriageActionForm(ActionForm):
    action = forms.ChoiceField(label="Triage:")


class NotesForm(forms.Form):
    resolution_notes = forms.CharField(
        label="Resolution notes",
        widget=forms.Textarea(attrs={"rows": 5, "cols": 80}),
        max_length=10000,
        help_text="What was checked and what was done; kept in the alert's status history.",
    )


ACTION_FIELD_FORM = f"{ActionLocation.CHANGE_FORM.value}-action"  # the action field on an object's page
# Triage actions are offered on the list and on each alert's page.
ON_LIST_AND_PAGE = [ActionLocation.CHANGE_LIST, ActionLocation.CHANGE_FORM]


@admin.register(AmplificationAlert)
class AmplificationAlertAdmin(admin.ModelAdmin):
    # What a triager reads first; the id stays searchable and is on the alert's page.
    list_display = [
        "summary",
        "severity_badge",
        "status_badge",
        "score",
        "organisation",
        "created_at",
        "resolved_by",
    ]
    list_display_links = ["summary"]
    list_filter = ["status", "severity", "protected_attribute", "model_id", "customer", "created_at"]
    search_fields = ["id", "signal__id", "model_id", "customer__id", "resolution_notes"]
    ordering = ["-created_at"]
    list_select_related = ["customer"]
    actions = ["acknowledge_alerts", "resolve_alerts", "mark_false_positive"]
    action_form = TriageActionForm
    fieldsets = [
        ("Triage", {"fields": [("severity_badge", "status_badge"), ("organisation", "model_id", "protected_attribute"),
                               "resolution_notes", ("resolved_by", "resolved_at", "acknowledged_at")]}),
        ("Analysis", {"fields": ["analysis_figures", "group_rates"]}),
        ("Signal", {"fields": ["signal_summary"]}),
        ("Status history", {"fields": ["status_history"]}),
        ("Record", {"classes": ["collapse"], "fields": ["id", "risk_level", "created_at", "updated_at"]}),
    ]  # fmt: skip
    readonly_fields = [
        "id", "organisation", "model_id", "protected_attribute", "risk_level", "resolution_notes", "resolved_by",
        "resolved_at", "acknowledged_at", "created_at", "updated_at", "severity_badge",
        "status_badge", "analysis_figures", "group_rates", "signal_summary", "status_history",
    ]  # fmt: skip

    @admin.display(description="severity", ordering="severity")
    def severity_badge(self, obj: AmplificationAlert) -> str:
        return badge(obj.severity)

    @admin.display(description="organisation", ordering="customer_id")
    def organisation(self, obj: AmplificationAlert) -> str:
        return obj.customer_id

    @admin.display(description="alert", ordering="protected_attribute")
    def summary(self, obj: AmplificationAlert) -> str:
        return f"{obj.protected_attribute} · {obj.model_id}"

    @admin.display(description="score", ordering="amplification_score")
    def score(self, obj: AmplificationAlert) -> str:
        return f"{obj.amplification_score:.2f}"

    @admin.display(description="status", ordering="status")
    def status_badge(self, obj: AmplificationAlert) -> str:
        return badge(obj.status)

    @admin.display(description="figures")
    def analysis_figures(self, obj: AmplificationAlert) -> str:
        return admin_display.analysis_figures(obj.analysis)

    @admin.display(description="AI and human rates")
    def group_rates(self, obj: AmplificationAlert) -> str:
        return admin_display.group_rates(obj.analysis)

    @admin.display(description="changes")
    def status_history(self, obj: AmplificationAlert) -> str:
        return admin_display.status_history(obj)

    @admin.display(description="related signal")
    def signal_summary(self, obj: AmplificationAlert) -> str:
        return admin_display.signal_summary(obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("signal")

    def changelist_view(self, request, extra_context=None):
        title = "Amplification alerts: humans widening a model's bias"
        return super().changelist_view(request, {"title": title, **(extra_context or {})})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # The page is for reading and triage: every change goes through the actions at its top
        # (the alert service), so there is nothing to save here.
        extra = {"title": "Amplification alert", "show_save": False, "show_save_and_continue": False,
                 "show_save_and_add_another": False, "show_delete": False}  # fmt: skip
        return super().change_view(request, object_id, form_url, {**extra, **(extra_context or {})})

    def _apply(self, request: HttpRequest, queryset: QuerySet, status: str, notes: str | None = None) -> None:
        count = 0
        for alert in queryset:
            services.alert_status_update(
                alert=alert, status=status, actor=_staff(request), resolution_notes=notes,
                resolved_by=_staff(request) if status != AlertStatus.ACKNOWLEDGED else None,
            )  # fmt: skip
            self.log_change(request, alert, f"Status set to {status}" + (f": {notes}" if notes else ""))
            count += 1
        label = status.replace("_", " ")
        self.message_user(request, f"{count} alert(s) set to {label}.", messages.SUCCESS)

    @admin.action(description="Acknowledge", permissions=["change"], location=ON_LIST_AND_PAGE)
    def acknowledge_alerts(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._apply(request, queryset, AlertStatus.ACKNOWLEDGED)

    @admin.action(description="Resolve (with notes)", permissions=["change"], location=ON_LIST_AND_PAGE)
    def resolve_alerts(self, request: HttpRequest, queryset: QuerySet):
        if "apply" in request.POST:
            form = NotesForm(request.POST)
            if form.is_valid():
                self._apply(request, queryset, AlertStatus.RESOLVED, form.cleaned_data["resolution_notes"])
                return None
        else:
            form = NotesForm()
        context = {**self.admin_site.each_context(request), "title": "Resolve amplification alerts",
                   "alerts": list(queryset.select_related("customer")), "form": form, "opts": self.model._meta,
                   "action_field": ACTION_FIELD_FORM if ACTION_FIELD_FORM in request.POST else "action",
                   "changelist_url": reverse("admin:fairness_amplificationalert_changelist")}  # fmt: skip
        return TemplateResponse(request, "fairness/admin/resolve_alerts.html", context)

    @admin.action(description="Mark as false positive", permissions=["change"], location=ON_LIST_AND_PAGE)
    def mark_false_positive(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._apply(request, queryset, AlertStatus.FALSE_POSITIVE)
