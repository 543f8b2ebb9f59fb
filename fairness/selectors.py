"""Reads for fairness signals and amplification alerts."""

import datetime as dt
from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet

from config.querysets import narrowed
from fairness.amplification import attribute_key
from fairness.models import AlertStatusChange, FairnessSignal
from fairness.models import AmplificationAlert as AmplificationAlert  # re-exported: the reports read it
from keys.models import Customer

if TYPE_CHECKING:
    from bias.selectors import GroupValueCount

CORRELATION_WINDOW = dt.timedelta(days=30)
SIGNAL_SORT_FIELDS = {
    "signalTimestamp": "signal_timestamp",
    "ingestedAt": "ingested_at",
    "metricValue": "metric_value",
    "modelId": "model_id",
}


def signal_list(
    rows: QuerySet[FairnessSignal], *, sort_by: str = "signalTimestamp", sort_order: str = "desc"
) -> QuerySet[FairnessSignal]:
    """The signals of a tenant-filtered (and list-filtered) queryset in the order asked for."""
    prefix = "-" if sort_order == "desc" else ""
    # The id (time-sortable) breaks ties so pages never overlap.
    return rows.order_by(f"{prefix}{SIGNAL_SORT_FIELDS[sort_by]}", f"{prefix}id")


def alert_list(rows: QuerySet[AmplificationAlert]) -> QuerySet[AmplificationAlert]:
    """The alerts of a tenant-filtered (and list-filtered) queryset, newest first."""
    return rows.order_by("-created_at", "-id")


def favorable_values(*, customer: Customer, model_id: str) -> frozenset[str]:
    """The model's favourable values when the bias app configures them (docs/reference/bias.md, Favourable
    values), else the default list."""
    from bias import selectors as bias_selectors

    return frozenset(bias_selectors.favorable_values(customer=customer, model_id=model_id))


def correlation_since(signal: FairnessSignal) -> dt.datetime:
    """The start of a signal's window of correlated decisions (docs/reference/fairness.md,
    Correlated decisions): the UTC day 30 days before its signalTimestamp; the window ends at
    the analysis' time."""
    day = (signal.signal_timestamp - CORRELATION_WINDOW).astimezone(dt.UTC).date()
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


def correlated_counts(signal: FairnessSignal, *, analyzed_at: dt.datetime) -> list["GroupValueCount"]:
    """The counts of the decisions correlated with the signal (docs/reference/fairness.md, Correlated
    decisions): its window ends at the analysis' time, so a signal analysed as of an earlier time
    (seed_demo's back-filled history) never sees the decisions made after it. From the bias app's daily
    subgroup statistics (aggregated in SQL, independent of history size) and the decisions of the
    analysis' own day up to it."""
    from bias.selectors import amplification_counts

    return amplification_counts(
        customer=signal.customer,
        model_id=signal.model_id,
        model_version=signal.model_version or None,
        attribute=attribute_key(signal.protected_attribute),
        since=signal.signal_timestamp - CORRELATION_WINDOW,
        until=analyzed_at,
    )


def alerts_for_report(
    customer: Customer, *, until: dt.datetime, model_ids: list[str] | None = None
) -> QuerySet[AmplificationAlert]:
    """The amplification alerts raised before `until` (a report's period end), newest first,
    with their signal and status history loaded (a compliance report lists both)."""
    qs = narrowed(
        AmplificationAlert.objects.filter(customer=customer, created_at__lt=until), model_id__in=model_ids
    )
    return qs.select_related("signal").prefetch_related("status_changes").order_by("-created_at", "-id")


def alerts_touched_in(
    customer: Customer, *, since: dt.datetime, until: dt.datetime, model_ids: list[str] | None = None
) -> QuerySet[AmplificationAlert]:
    """The amplification alerts created or changed in [since, until) (the alerts a report's
    period counts), newest first, with their signal and whole status history loaded."""
    changed = AlertStatusChange.objects.filter(alert__customer=customer, at__gte=since, at__lt=until)
    qs = AmplificationAlert.objects.filter(customer=customer).filter(
        Q(created_at__gte=since, created_at__lt=until) | Q(pk__in=changed.values("alert_id"))
    )
    qs = narrowed(qs, model_id__in=model_ids)
    return qs.select_related("signal").prefetch_related("status_changes").order_by("-created_at", "-id")
