"""The query parameters of GET /drift-monitors and GET /drift-alarms (docs/reference/drift.md)."""

from config.filters import QueryFilterSet, bound_filter, choice_filter, text_filter
from drift.charts import CHARTS
from drift.models import DriftAlarm, DriftMonitor

BOUND = "ISO 8601 date or timestamp (a date covers its UTC day)"


class MonitorFilters(QueryFilterSet):
    chart = choice_filter(choices=list(CHARTS), help_text="Only monitors of this chart")
    scope = choice_filter(choices=["user", "organization"], help_text="Only monitors of this scope")
    user_id = text_filter(help_text="Only monitors of this reviewer")
    model_id = text_filter(help_text="Only monitors of this model")
    status = choice_filter(
        choices=[str(s) for s in DriftMonitor.Status.values], help_text="Only monitors in this status"
    )

    class Meta(QueryFilterSet.Meta):
        model = DriftMonitor
        fields: list[str] = []


class AlarmFilters(QueryFilterSet):
    ranges = (("from", "to"),)
    status = choice_filter(choices=["open", "acknowledged"], help_text="Only alarms in this status")
    severity = choice_filter(choices=["low", "medium", "high"], help_text="Only alarms of this severity")
    chart = choice_filter(choices=list(CHARTS), help_text="Only alarms of this chart")
    monitor_id = text_filter(help_text="Only alarms of this monitor")
    user_id = text_filter(help_text="Only alarms of this reviewer")
    from_ = bound_filter("raised_at", end=False, help_text=f"{BOUND}; the alarm's raised_at")
    to = bound_filter("raised_at", end=True, help_text=f"{BOUND}; the alarm's raised_at")

    class Meta(QueryFilterSet.Meta):
        model = DriftAlarm
        fields: list[str] = []
