"""Writes for fairness signals, their amplification analysis and amplification alerts
(docs/reference/fairness.md)."""

import datetime as dt
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from config.jsondoc import JSONObject
from config.ratelimit import SlidingWindow
from config.timeutils import isoformat
from fairness import amplification, selectors
from fairness.exceptions import AmplificationRateLimited, FairnessRateLimited, SignalInFuture, SignalTooOld
from fairness.inputs import SignalInput
from fairness.models import AlertStatus, AlertStatusChange, AmplificationAlert, FairnessSignal
from keys.models import Customer
from webhooks.services import event_emit

FUTURE_TOLERANCE = dt.timedelta(minutes=5)
MAX_SIGNAL_AGE = dt.timedelta(days=90)
SIGNALS_PER_HOUR = 100
ANALYSES_PER_MINUTE = 10
ALERTING_SEVERITIES = ("high", "critical")

signal_limiter = SlidingWindow("fairness:signals", limit=SIGNALS_PER_HOUR, window_seconds=3600)
analyze_limiter = SlidingWindow("fairness:analyze", limit=ANALYSES_PER_MINUTE, window_seconds=60)


@dataclass(frozen=True)
class AnalysisResult:
    signal: FairnessSignal
    analysis: JSONObject
    alert: AmplificationAlert | None


def _signal_time_check(signal_timestamp: dt.datetime, now: dt.datetime) -> None:
    if signal_timestamp > now + FUTURE_TOLERANCE:
        raise SignalInFuture(
            f"signalTimestamp {isoformat(signal_timestamp)} is more than 5 minutes ahead of server time {isoformat(now)}.",
            errors=[{"field": "signalTimestamp", "message": "is in the future"}],
        )
    if signal_timestamp < now - MAX_SIGNAL_AGE:
        raise SignalTooOld(
            f"signalTimestamp {isoformat(signal_timestamp)} is older than 90 days.",
            errors=[{"field": "signalTimestamp", "message": "is older than 90 days"}],
        )


def signal_ingest(*, customer: Customer, data: SignalInput, at: dt.datetime | None = None) -> AnalysisResult:
    """Store a parsed signal after the time rules and the hourly limit (docs/reference/fairness.md,
    Ingestion checks in order), analyse it, raise its alert, and emit the events, all in one transaction.
    `at` backdates the ingest and the alert (seed_demo's history; not reachable from the API)."""
    _signal_time_check(data.signal_timestamp, timezone.now())
    decision = signal_limiter.hit(customer.pk)
    if not decision.allowed:
        raise FairnessRateLimited(
            f"More than {SIGNALS_PER_HOUR} signals in a sliding hour; retry later.",
            retry_after=decision.retry_after,
        )
    # A request that fails after this point has its hit refunded by the middleware
    # (docs/reference/access.md, Named per-customer limits).
    with transaction.atomic():
        signal = FairnessSignal.objects.create(
            customer=customer,
            external_tool_id=data.external_tool_id,
            external_tool_version=data.external_tool_version,
            model_id=data.model_id,
            model_version=data.model_version,
            metric_name=data.metric_name,
            metric_value=data.metric_value,
            threshold=data.threshold,
            passes_threshold=data.passes_threshold,
            protected_attribute=data.protected_attribute,
            privileged_group=data.privileged_group,
            unprivileged_group=data.unprivileged_group,
            sample_size=data.sample_size,
            confidence_interval=data.confidence_interval.stored() if data.confidence_interval else None,
            raw_payload_json=data.raw_payload_json,
            signal_timestamp=data.signal_timestamp,
            ingested_at=at or timezone.now(),
        )
        result = _analyse_and_alert(signal, now=at)
        event_emit(
            customer=customer,
            type="model.bias.ingested",
            data={
                "signalId": signal.id,
                "modelId": signal.model_id,
                "modelVersion": signal.model_version,
                "externalToolId": signal.external_tool_id,
                "metricName": signal.metric_name,
                "metricValue": signal.metric_value,
                "protectedAttribute": signal.protected_attribute,
                "signalTimestamp": isoformat(signal.signal_timestamp),
                "analysisStatus": result.analysis["status"],
                "amplificationScore": result.analysis["amplificationScore"],
                "riskLevel": result.analysis["riskLevel"],
                "alertId": result.alert.id if result.alert else None,
            },
        )
    return result


def signal_analyze(*, customer: Customer, signal: FairnessSignal) -> AnalysisResult:
    """POST /bias/amplification/analyze/:signalId: the analysis now, 10 per sliding minute."""
    decision = analyze_limiter.hit(customer.pk)
    if not decision.allowed:
        raise AmplificationRateLimited(
            f"More than {ANALYSES_PER_MINUTE} analyses in a sliding minute; retry later.",
            retry_after=decision.retry_after,
        )
    with transaction.atomic():
        # The row lock serialises concurrent analyses of one signal (one alert per signal).
        locked = FairnessSignal.objects.select_for_update().select_related("customer").get(pk=signal.pk)
        return _analyse_and_alert(locked)


def _analyse_and_alert(signal: FairnessSignal, *, now: dt.datetime | None = None) -> AnalysisResult:
    now = now or timezone.now()
    analysis = amplification.analyse(
        selectors.correlated_counts(signal, analyzed_at=now),
        metric_value=signal.metric_value,
        privileged=signal.privileged_group,
        unprivileged=signal.unprivileged_group,
        favorable=selectors.favorable_values(customer=signal.customer, model_id=signal.model_id),
        analyzed_at=isoformat(now),
    )
    signal.analysis = analysis
    signal.save(update_fields=["analysis"])
    alert = AmplificationAlert.objects.filter(signal=signal).first()
    level = analysis["riskLevel"]
    if analysis["status"] != "completed" or level in (None, "none"):
        # Nothing to raise; an existing alert keeps its last finding for the humans triaging it.
        return AnalysisResult(signal, analysis, alert)
    previous_severity = None
    if alert is None:
        alert = AmplificationAlert.objects.create(
            customer=signal.customer,
            signal=signal,
            model_id=signal.model_id,
            protected_attribute=signal.protected_attribute,
            amplification_score=analysis["amplificationScore"],
            risk_level=level,
            severity=level,
            status=AlertStatus.OPEN,
            analysis=analysis,
            created_at=now,
            updated_at=now,
        )
    elif alert.status in (AlertStatus.OPEN, AlertStatus.ACKNOWLEDGED):
        previous_severity = alert.severity
        alert.amplification_score = analysis["amplificationScore"]
        alert.risk_level = level
        alert.severity = level
        alert.analysis = analysis
        alert.updated_at = now
        alert.save(update_fields=["amplification_score", "risk_level", "severity", "analysis", "updated_at"])
    else:
        return AnalysisResult(signal, analysis, alert)
    if _escalated(previous_severity, alert.severity):
        event_emit(
            customer=signal.customer,
            type="bias.amplification",
            data={
                "alertId": alert.id,
                "signalId": signal.id,
                "modelId": signal.model_id,
                "modelVersion": signal.model_version,
                "protectedAttribute": signal.protected_attribute,
                "amplificationScore": alert.amplification_score,
                "riskLevel": alert.risk_level,
                "severity": alert.severity,
                "direction": analysis["direction"],
                "status": alert.status,
            },
        )
    return AnalysisResult(signal, analysis, alert)


def _escalated(previous: str | None, current: str) -> bool:
    """bias.amplification fires when an alert reaches high or critical: on creation, or when a
    re-analysis raises it (a repeated analysis at the same level does not fire again)."""
    if current not in ALERTING_SEVERITIES:
        return False
    if previous is None:
        return True
    levels = amplification.RISK_LEVELS
    return levels.index(current) > levels.index(previous)


@transaction.atomic
def alert_status_update(
    *,
    alert: AmplificationAlert,
    status: str,
    actor: str | None,
    resolution_notes: str | None = None,
    resolved_by: str | None = None,
    at: dt.datetime | None = None,
) -> AmplificationAlert:
    """PATCH /bias/amplification/:id and the admin actions (docs/reference/fairness.md, Alert status).
    Every status change is recorded with who, when, from, to and the notes. `at` backdates the
    change (seed_demo's triage history; not reachable from the API): default now."""
    alert = AmplificationAlert.objects.select_for_update().get(pk=alert.pk)
    now = at or timezone.now()
    previous = alert.status
    if resolution_notes is not None:
        alert.resolution_notes = resolution_notes
    if resolved_by is not None:
        alert.resolved_by = resolved_by
    if status != previous:
        if status in (AlertStatus.RESOLVED, AlertStatus.FALSE_POSITIVE):
            alert.resolved_at = now
        elif status == AlertStatus.OPEN:
            alert.resolved_at = None
        if status == AlertStatus.ACKNOWLEDGED and alert.acknowledged_at is None:
            alert.acknowledged_at = now
        alert.status = status
        AlertStatusChange.objects.create(
            alert=alert,
            from_status=previous,
            to_status=status,
            by=resolved_by or actor,
            notes=resolution_notes,
            at=now,
        )
    alert.updated_at = now
    alert.save()
    return alert
