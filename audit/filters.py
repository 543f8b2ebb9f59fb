"""The query parameters of GET /v1/audit-trail (docs/reference/decisions.md) as a FilterSet."""

from django.db.models import QuerySet

from audit.categories import RECORD_CATEGORIES
from audit.models import Decision
from config.filters import (
    QueryFilterSet,
    boolean_filter,
    bound_filter,
    choice_filter,
    text_filter,
)
from config.timeutils import BOUND_HELP


class AuditTrailFilters(QueryFilterSet):
    ranges = (("from", "to"),)

    user_id = text_filter(help_text="Only the entries of this reviewer's decisions")
    model_id = text_filter(help_text="Only the entries of this model's decisions")
    decision_id = text_filter(
        "decision_ref", help_text="Only the entries of this decision (its logging and later outcome)"
    )
    calibration = choice_filter(
        "calibration_category",
        choices=RECORD_CATEGORIES,
        help_text="Only the entries of decisions of this calibration category",
    )
    probe = boolean_filter(
        method="probe_narrow",
        help_text="true: only the entries of vigilance probes; false: only real decisions'",
    )
    from_ = bound_filter("timestamp", end=False, help_text=f"{BOUND_HELP}; the decision's timestamp")
    to = bound_filter("timestamp", end=True, help_text=f"{BOUND_HELP}; the decision's timestamp")

    def probe_narrow(self, queryset: QuerySet[Decision], name: str, value: bool) -> QuerySet[Decision]:
        return queryset.filter(probe__isnull=not value)
