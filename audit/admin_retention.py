"""Retention policies in the staff console (Access -> Retention policies; docs/reference/
erasure.md, "The retention policy"): each customer's minimum and maximum retention and legal
hold, changed through the same rules and service as PUT /retention-policy, so that a change
made here appends its `retention_policy_changed` entry with the staff user."""

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from audit import retention
from audit.erasure_inputs import RetentionPolicyInput
from audit.models_erasure import RetentionPolicy
from config.admin import when
from config.bodymodels import body_parse
from config.exceptions import DomainError


class RetentionPolicyForm(forms.ModelForm):
    max_days = forms.IntegerField(required=False, help_text="Empty: no maximum.")

    class Meta:
        model = RetentionPolicy
        fields = ["customer", "min_days", "max_days", "legal_hold"]

    def clean(self) -> dict[str, object]:  # a form's cleaned values, by field
        data = super().clean() or {}
        if not self.errors:
            body = {name: data.get(name) for name in ("min_days", "max_days", "legal_hold")}
            try:
                body_parse(RetentionPolicyInput, body)  # the API's own rules (min 183 days, ...)
            except DomainError as exc:
                for error in exc.errors or [{"field": None, "message": exc.detail}]:
                    field = error.get("field")
                    self.add_error(field if field in self.fields else None, str(error["message"]))
        return data


@admin.register(RetentionPolicy)
class RetentionPolicyAdmin(admin.ModelAdmin):
    form = RetentionPolicyForm
    list_display = ["customer", "min_days", "max_days", "legal_hold", "changed"]
    list_filter = ["legal_hold", "customer"]
    ordering = ["customer"]

    @admin.display(description="changed", ordering="updated_at")
    def changed(self, policy: RetentionPolicy) -> str:
        return when(policy.updated_at)

    def get_readonly_fields(self, request: HttpRequest, obj: RetentionPolicy | None = None) -> list[str]:
        return ["customer"] if obj is not None else []

    def has_delete_permission(self, request: HttpRequest, obj: RetentionPolicy | None = None) -> bool:
        return False  # a policy changes (and says so in the chain); it is never removed

    def save_model(
        self, request: HttpRequest, obj: RetentionPolicy, form: RetentionPolicyForm, change: bool
    ) -> None:
        data = form.cleaned_data
        saved = retention.retention_policy_set(
            customer=obj.customer,
            min_days=data["min_days"],
            max_days=data["max_days"],
            legal_hold=data["legal_hold"],
            staff_user=f"staff:{request.user.get_username()}",
        )
        obj.updated_at = saved.updated_at
