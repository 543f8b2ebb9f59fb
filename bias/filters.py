"""The query parameters of GET /v1/bias/feed (docs/reference/bias.md) as a FilterSet."""

from django.db.models import QuerySet

from bias import selectors
from bias.domain import is_valid_attribute_name
from bias.models import BiasAlert, BiasType, Severity
from config.filters import QueryFilterSet, RuleFilter, bound_filter, choice_filter, text_filter
from config.inputs import text
from config.jsonwalk import invalid
from config.timeutils import BOUND_HELP

ALERT_SEVERITIES = [s.value for s in Severity if s != Severity.NONE]
ATTRIBUTE_HELP = "gender, age_group, ethnicity or custom.<key>"


def attribute_name(raw: object) -> str | None:
    """A subgroup attribute's name as a query parameter: absent or empty is None."""
    value = text(raw, "attribute")
    if value is not None and not is_valid_attribute_name(value):
        raise invalid("attribute", f"must be {ATTRIBUTE_HELP}")
    return value


def _finding(queryset: QuerySet[BiasAlert], name: str, value: object) -> QuerySet[BiasAlert]:
    return queryset  # attribute and bias_type narrow together (BiasFeedFilters.filter_queryset)


class BiasFeedFilters(QueryFilterSet):
    ranges = (("from", "to"),)

    severity = choice_filter(choices=ALERT_SEVERITIES, help_text="Only alerts of this severity")
    attribute = RuleFilter(
        rule=attribute_name,
        method=_finding,
        help_text=f"Only alerts with a finding on this attribute: {ATTRIBUTE_HELP}",
    )
    bias_type = choice_filter(
        choices=[t.value for t in BiasType],
        method=_finding,
        help_text="Only alerts with a finding of this type (the same finding as `attribute` when both are given)",
    )
    model_id = text_filter(help_text="Only alerts of this model")
    from_ = bound_filter("created_at", end=False, help_text=f"{BOUND_HELP}; the alert's created_at")
    to = bound_filter("created_at", end=True, help_text=f"{BOUND_HELP}; the alert's created_at")

    def filter_queryset(self, queryset: QuerySet[BiasAlert]) -> QuerySet[BiasAlert]:
        values = self.form.cleaned_data
        return selectors.bias_alerts_with_finding(
            super().filter_queryset(queryset), attribute=values["attribute"], bias_type=values["bias_type"]
        )
