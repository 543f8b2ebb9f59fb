"""Staff administration: bias alerts (read-only evidence: a detection result has no triage state in
the API, docs/reference/bias.md, Bias alerts and the feed) and per-model favourable values."""

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from bias import admin_display, services
from bias.domain import normalize_value
from bias.models import BiasAlert, BiasAlertFinding, ModelFavorableValues
from config.admin import badge, when


class BiasTypeFilter(admin.SimpleListFilter):
    title = "bias type"
    parameter_name = "bias_type"

    def lookups(
        self, request: HttpRequest, model_admin: "admin.ModelAdmin[BiasAlert]"
    ) -> list[tuple[str, str]]:
        from bias.models import BiasType

        return list(BiasType.choices)

    def queryset(self, request: HttpRequest, queryset: QuerySet[BiasAlert]) -> QuerySet[BiasAlert]:
        if self.value():
            return queryset.filter(
                pk__in=BiasAlertFinding.objects.filter(bias_type=self.value()).values("alert_id")
            )
        return queryset


class AttributeFilter(admin.SimpleListFilter):
    title = "attribute"
    parameter_name = "attribute"

    def lookups(
        self, request: HttpRequest, model_admin: "admin.ModelAdmin[BiasAlert]"
    ) -> list[tuple[str, str]]:
        names = (
            BiasAlertFinding.objects.filter(alert__in=model_admin.get_queryset(request).values("pk"))
            .order_by("attribute")
            .values_list("attribute", flat=True)
            .distinct()[:100]
        )
        return [(n, n) for n in names]

    def queryset(self, request: HttpRequest, queryset: QuerySet[BiasAlert]) -> QuerySet[BiasAlert]:
        if self.value():
            return queryset.filter(
                pk__in=BiasAlertFinding.objects.filter(attribute=self.value()).values("alert_id")
            )
        return queryset


@admin.register(BiasAlert)
class BiasAlertAdmin(admin.ModelAdmin):
    list_display = [
        "summary",
        "severity_badge",
        "organisation",
        "model_id",
        "types",
        "decision_id",
        "created",
    ]
    list_display_links = ["summary"]
    list_filter = ["severity", BiasTypeFilter, AttributeFilter, "model_id", "customer", "created_at"]
    search_fields = ["id", "decision_id", "model_id", "customer__id"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]
    fieldsets = [
        ("Alert", {"fields": [("severity_badge", "organisation", "model_id"), ("attribute_names", "types"),
                              ("decision_id", "created"), "id"]}),
        ("Findings", {"fields": ["findings_table"]}),
    ]  # fmt: skip
    readonly_fields = ["id", "organisation", "decision_id", "model_id", "severity_badge", "attribute_names",
                       "types", "created", "findings_table"]  # fmt: skip

    @admin.display(description="alert", ordering="created_at")
    def summary(self, obj: BiasAlert) -> str:
        return f"{admin_display.joined(obj.attributes)} · {obj.model_id or '(no model)'}"

    @admin.display(description="severity", ordering="severity")
    def severity_badge(self, obj: BiasAlert) -> str:
        return badge(obj.severity)

    @admin.display(description="organisation", ordering="customer_id")
    def organisation(self, obj: BiasAlert) -> str:
        return obj.customer_id

    @admin.display(description="bias types")
    def types(self, obj: BiasAlert) -> str:
        return admin_display.joined(obj.bias_types, labels=True)

    @admin.display(description="attributes")
    def attribute_names(self, obj: BiasAlert) -> str:
        return admin_display.joined(obj.attributes)

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: BiasAlert) -> str:
        return when(obj.created_at)

    @admin.display(description="what each finding measured")
    def findings_table(self, obj: BiasAlert) -> str:
        return admin_display.findings_table(obj)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, object] | None = None,
    ) -> HttpResponse:
        extra = {"title": "Bias alert", **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: BiasAlert | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: BiasAlert | None = None) -> bool:
        return False


class ModelFavorableValuesForm(forms.ModelForm):
    class Meta:
        model = ModelFavorableValues
        fields = ["customer", "model_id", "values"]

    def clean_values(self) -> list[str]:
        values = self.cleaned_data["values"]
        if not isinstance(values, list) or not all(isinstance(v, str | int | float) for v in values):
            raise forms.ValidationError('Enter a JSON list of strings, e.g. ["approve", "approved"].')
        normalised = sorted({normalize_value(v) for v in values if normalize_value(v)})
        if not normalised:
            raise forms.ValidationError("List at least one favourable value.")
        return normalised


@admin.register(ModelFavorableValues)
class ModelFavorableValuesAdmin(admin.ModelAdmin):
    form = ModelFavorableValuesForm
    list_display = ["customer", "model_id", "values", "updated_at"]
    list_filter = ["customer"]
    search_fields = ["model_id", "customer__id"]

    def save_model(
        self,
        request: HttpRequest,
        obj: ModelFavorableValues,
        form: "forms.ModelForm[ModelFavorableValues]",
        change: bool,
    ) -> None:
        # Through the service: a change of the values in force is an entry of the chain.
        services.favourable_values_save(row=obj, staff_user=request.user.get_username())

    def delete_model(self, request: HttpRequest, obj: ModelFavorableValues) -> None:
        services.favourable_values_delete(row=obj, staff_user=request.user.get_username())

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ModelFavorableValues]) -> None:
        for row in queryset:
            services.favourable_values_delete(row=row, staff_user=request.user.get_username())
