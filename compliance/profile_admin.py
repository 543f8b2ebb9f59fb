"""System profiles in the staff console (docs/reference/system-profiles.md): the profiles with how
many fields are provided, and a form that writes one through the same service as
PUT /v1/system-profiles/:model_id (recorded as staff:<username>)."""

from django import forms
from django.contrib import admin

from compliance import profiles
from compliance.models import PROFILE_FIELDS, SystemProfile
from config.admin import when


class SystemProfileForm(forms.ModelForm):
    class Meta:
        model = SystemProfile
        fields = ["customer", "model_id", *PROFILE_FIELDS]
        widgets = {
            name: forms.Textarea(attrs={"rows": 3, "cols": 80})
            for name in ("purpose", "deployment_context", "intended_reviewers")
        }
        help_texts = {
            "model_id": "The model id the customer's decisions carry (model_id).",
            "intended_reviewers": "Who is meant to review its recommendations: roles, training.",
        }

    def clean(self):
        data = super().clean() or {}
        customer = data.get("customer")
        new = self.instance.pk is None and customer is not None
        if new and SystemProfile.objects.filter(customer=customer).count() >= profiles.PROFILES_MAX:
            raise forms.ValidationError(
                f"{data['customer'].pk} already has {profiles.PROFILES_MAX} system profiles; change one instead."
            )
        return data


@admin.register(SystemProfile)
class SystemProfileAdmin(admin.ModelAdmin):
    form = SystemProfileForm
    list_display = ["model_id", "customer", "name", "provider", "version", "provided", "updated"]
    list_filter = ["customer"]
    search_fields = ["model_id", "name", "provider"]
    ordering = ["customer", "model_id"]
    readonly_fields = ["updated_at", "updated_by"]

    def get_readonly_fields(self, request, obj=None):
        # Which model a profile describes is fixed once written.
        return [*self.readonly_fields, "customer", "model_id"] if obj is not None else self.readonly_fields

    def get_fields(self, request, obj=None):
        return ["customer", "model_id", *PROFILE_FIELDS, *(["updated_at", "updated_by"] if obj else [])]

    @admin.display(description="fields provided")
    def provided(self, profile: SystemProfile) -> str:
        filled = sum(1 for name in PROFILE_FIELDS if getattr(profile, name).strip())
        return f"{filled} of {len(PROFILE_FIELDS)}"

    @admin.display(description="updated", ordering="updated_at")
    def updated(self, profile: SystemProfile) -> str:
        return f"{when(profile.updated_at)} by {profile.updated_by or '-'}"

    def save_model(self, request, obj, form, change):
        # The service writes it (the same as the API), so the row is not saved here.
        saved, _ = profiles.profile_save(
            customer=obj.customer,
            model_id=obj.model_id,
            changes={name: form.cleaned_data.get(name, "") for name in PROFILE_FIELDS},
            replace=True,
            by=f"staff:{request.user.get_username()}",
        )
        stored = SystemProfile.objects.get(customer=obj.customer, model_id=saved.model_id)
        obj.pk = stored.pk
        obj.updated_at, obj.updated_by = stored.updated_at, stored.updated_by
