"""Staff administration: user profiles (the daily aggregates, read-only), risk states
(read-only) and thresholds (editable; the beat task checks them every minute)."""

from collections.abc import Iterator
from typing import TYPE_CHECKING

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.http import HttpRequest

from calibration import rules
from calibration.models import ALL_MODELS, RiskUserState, Threshold, UserDailyAggregate
from config.admin import ReadOnlyAdmin, count_column, reviewer_column, score_text

if TYPE_CHECKING:  # django-stubs' name for the choice a filter's template reads
    from django.contrib.admin.filters import _ListFilterChoices


class ModelRowsFilter(admin.SimpleListFilter):
    """Each reviewer's day once: by default the rows summed over every model (model "*"), or the
    rows of one model. Listing both put every day in twice, once as "*" and once as its model."""

    title = "model"
    parameter_name = "model"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        rows = model_admin.get_queryset(request).exclude(model_key=ALL_MODELS)
        models = rows.order_by("model_key").values_list("model_key", flat=True).distinct()[:100]
        return [(m, m) for m in models]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(model_key=self.value() or ALL_MODELS)

    def choices(self, changelist: ChangeList) -> Iterator["_ListFilterChoices"]:
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "Every model (summed)",
        }
        for value, label in self.lookup_choices:
            yield {
                "selected": self.value() == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": label,
            }


@admin.register(UserDailyAggregate)
class UserDailyAggregateAdmin(ReadOnlyAdmin):
    list_display = [
        "customer",
        "reviewer",
        "model_name",
        "day",
        "decisions",
        "followed_count",
        "overtrust_count",
        "undertrust_count",
        "trust_score",
    ]
    reviewer = reviewer_column()
    decisions = count_column("n", "decisions")
    followed_count = count_column("followed", "followed the AI")
    overtrust_count = count_column("overtrust", "over-trust")
    undertrust_count = count_column("undertrust", "under-trust")
    list_filter = [ModelRowsFilter, "day"]
    search_fields = ["=user_id", "=customer__id"]
    ordering = ["-day", "customer", "user_id"]

    @admin.display(description="model", ordering="model_key")
    def model_name(self, obj: UserDailyAggregate) -> str:
        return "every model" if obj.model_key == ALL_MODELS else obj.model_key

    @admin.display(description="trust score (day, 0 to 1)")
    def trust_score(self, obj: UserDailyAggregate) -> str:
        return score_text(
            rules.figures({name: getattr(obj, name) for name in rules.SUM_FIELDS})["trust_score"]
        )


@admin.register(RiskUserState)
class RiskUserStateAdmin(admin.ModelAdmin):
    list_display = ["customer", "reviewer", "at_risk", "score", "last_identified_at", "updated_at"]
    reviewer = reviewer_column()

    @admin.display(description="trust score (0 to 1)", ordering="trust_score")
    def score(self, obj: RiskUserState) -> str:
        return score_text(obj.trust_score)

    list_filter = ["at_risk"]
    search_fields = ["=user_id", "=customer__id"]

    def has_add_permission(self, request: HttpRequest, obj: RiskUserState | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: RiskUserState | None = None) -> bool:
        return False


@admin.register(Threshold)
class ThresholdAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "customer",
        "figure",
        "comparison",
        "value",
        "window_days",
        "model_id",
        "is_active",
        "breached",
        "last_value",
        "last_checked_at",
    ]
    list_filter = ["is_active", "breached", "figure"]
    search_fields = ["name", "=customer__id", "=model_id"]
    readonly_fields = ["breached", "last_value", "last_checked_at", "breached_at", "created_at"]
