"""The `calibration` engine of /engines/status (docs/reference/system.md, Engine status): cheap reads of
the chain heads (one row per customer) and the thresholds table."""

import dataclasses

from django.conf import settings

from audit import platform as audit_platform
from calibration import rules
from calibration.models import Threshold
from config.jsondoc import JSONObject
from config.timeutils import isoformat


# the engine's status document, rendered as JSON
def engines() -> list[JSONObject]:
    last = audit_platform.platform_chain_last_append_at()
    return [
        {
            "name": "calibration",
            "status": "operational",
            "version": settings.SERVICE_VERSION,
            "last_activity_at": isoformat(last),
            "active_thresholds": Threshold.objects.filter(is_active=True).count(),
            "breached_thresholds": Threshold.objects.filter(is_active=True, breached=True).count(),
            "settings": {
                **dataclasses.asdict(rules.thresholds()),
                "window_days": rules.window_days(),
            },
        }
    ]
