"""The query parameters of GET /v1/model-fairness-signals and GET /v1/bias/amplification
(docs/reference/fairness.md) as FilterSets, camelCase as the integration names them."""

from django.db.models import QuerySet

from config.filters import QueryFilterSet, boolean_filter, bound_filter, choice_filter, text_filter
from fairness import selectors
from fairness.inputs import TOOLS
from fairness.models import AlertStatus, Severity

SORT_ORDERS = ["asc", "desc"]
DAY_OR_STAMP = "ISO 8601 date (its whole UTC day) or timestamp (exact)"


def _sorted(queryset: QuerySet, name: str, value: object) -> QuerySet:
    return queryset  # applied with sortOrder (SignalFilters.filter_queryset)


class SignalFilters(QueryFilterSet):
    ranges = (("startDate", "endDate"),)

    modelId = text_filter("model_id", help_text="Only signals of this model")
    externalToolId = text_filter(
        "external_tool_id", help_text=f"Only signals of this tool: {', '.join(TOOLS)}"
    )
    protectedAttribute = text_filter("protected_attribute", help_text="Only signals about this attribute")
    passesThreshold = boolean_filter(
        "passes_threshold",
        help_text="true: only signals whose metric passes its threshold; false: only those that fail",
    )
    startDate = bound_filter(
        "signal_timestamp", end=False, help_text=f"{DAY_OR_STAMP}, inclusive; the signal's signalTimestamp"
    )
    endDate = bound_filter(
        "signal_timestamp",
        end=True,
        help_text=f"{DAY_OR_STAMP}, inclusive for a date; the signal's signalTimestamp",
    )
    sortBy = choice_filter(
        choices=list(selectors.SIGNAL_SORT_FIELDS),
        method=_sorted,
        help_text="The order of the list (default signalTimestamp); ties are broken by the signal's id",
    )
    sortOrder = choice_filter(choices=SORT_ORDERS, method=_sorted, help_text="asc or desc (default desc)")

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        values = self.form.cleaned_data
        return selectors.signal_list(
            super().filter_queryset(queryset),
            sort_by=values["sortBy"] or "signalTimestamp",
            sort_order=values["sortOrder"] or "desc",
        )


class AlertFilters(QueryFilterSet):
    ranges = (("startDate", "endDate"),)

    status = choice_filter(choices=list(AlertStatus.values), help_text="Only alerts in this triage state")
    severity = choice_filter(choices=list(Severity.values), help_text="Only alerts of this severity")
    protectedAttribute = text_filter("protected_attribute", help_text="Only alerts about this attribute")
    startDate = bound_filter(
        "created_at", end=False, help_text=f"{DAY_OR_STAMP}, inclusive; the alert's createdAt"
    )
    endDate = bound_filter(
        "created_at", end=True, help_text=f"{DAY_OR_STAMP}, inclusive for a date; the alert's createdAt"
    )
