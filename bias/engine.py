"""The bias_detection engine in /engines/status and its /metrics figures (cheap, indexed)."""

import datetime as dt

from django.conf import settings
from django.utils import timezone

from bias.models import BiasAlert
from bias.platform import platform_bias_last_activity
from config.jsondoc import JSONObject
from config.timeutils import isoformat


# the engine's status document, rendered as JSON
def engines() -> list[JSONObject]:
    since = timezone.now() - dt.timedelta(hours=24)
    return [
        {
            "name": "bias_detection",
            "status": "operational",
            "version": settings.SERVICE_VERSION,
            "last_activity_at": isoformat(platform_bias_last_activity()),
            "alerts_last_24h": BiasAlert.objects.filter(created_at__gte=since).count(),
        }
    ]


def metrics() -> dict[str, int]:
    since = timezone.now() - dt.timedelta(hours=24)
    return {"bias_alerts_last_24h": BiasAlert.objects.filter(created_at__gte=since).count()}
