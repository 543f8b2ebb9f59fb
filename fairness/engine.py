"""The `amplification` engine in /engines/status and the fairness figures in /metrics
(docs/reference/system.md)."""

from django.conf import settings
from django.db.models import Max

from config.jsondoc import JSONObject
from config.timeutils import isoformat
from fairness import platform
from fairness.models import AmplificationAlert, FairnessSignal
from keys.models import Customer


def engines() -> list[JSONObject]:
    # Both maxima are answered from the descending indexes on ingested_at and status.
    last_signal = FairnessSignal.objects.aggregate(at=Max("ingested_at"))["at"]
    last_alert = AmplificationAlert.objects.aggregate(at=Max("updated_at"))["at"]
    last = max((t for t in (last_signal, last_alert) if t is not None), default=None)
    alerts = platform.platform_alerts_by_status()
    return [
        {
            "name": "amplification",
            "status": "operational",
            "version": settings.INTEGRATION_VERSION,
            "last_activity_at": isoformat(last),
            "open_alerts": alerts.get("open", 0) + alerts.get("acknowledged", 0),
        }
    ]


def metrics() -> JSONObject:
    statuses = dict.fromkeys(("open", "acknowledged", "resolved", "false_positive"), 0)
    statuses.update(platform.platform_alerts_by_status())
    return {"signals_ingested": platform.platform_signals_ingested_total(), "amplification_alerts": statuses}


def customer_metrics(customer: Customer) -> JSONObject:
    """The caller's own figures for a non-admin key (an indexed count of its signals)."""
    return {"signals_ingested": FairnessSignal.objects.filter(customer=customer).count()}
