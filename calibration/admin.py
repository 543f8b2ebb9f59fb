"""Staff administration: user profiles (the daily aggregates, read-only), risk states
(read-only) and thresholds (editable; the beat task checks them every minute)."""

from django.contrib import admin
from django.http import HttpRequest

from calibration import rules
from calibration.models import RiskUserState, Threshold, UserDailyAggregate
from config.admin import ReadOnlyAdmin, count_column, score_text


@admin.register(UserDailyAggregate)
class UserDailyAggregateAdmin(ReadOnlyAdmin):
    list_display = [
        "customer",
        "user_id",
        "model_key",
        "day",
        "decisions",
        "followed_count",
        "overtrust_count",
        "undertrust_count",
        "trust_score",
    ]
    decisions = count_column("n", "decisions")
    followed_count = count_column("followed", "followed the AI")
    overtrust_count = count_column("overtrust", "over-trust")
    undertrust_count = count_column("undertrust", "under-trust")
    list_filter = ["model_key", "day"]
    search_fields = ["=user_id", "=customer__id"]
    ordering = ["-day", "customer", "user_id"]

    @admin.display(description="trust score (day, 0 to 1)")
    def trust_score(self, obj: UserDailyAggregate) -> str:
        return score_text(
            rules.figures({name: getattr(obj, name) for name in rules.SUM_FIELDS})["trust_score"]
        )


@admin.register(RiskUserState)
class RiskUserStateAdmin(admin.ModelAdmin):
    list_display = ["customer", "user_id", "at_risk", "score", "last_identified_at", "updated_at"]

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
