"""Shared builders for the fairness tests."""

import datetime as dt
from typing import Any

from config.timeutils import isoformat

SIGNALS = "/v1/model-fairness-signals"
ALERTS = "/v1/bias/amplification"


def now_iso(**delta: float) -> str:
    return isoformat(dt.datetime.now(dt.UTC) + dt.timedelta(**delta))


def signal_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "externalToolId": "fairlearn",
        "externalToolVersion": "0.15.0",
        "modelId": "credit-v3",
        "modelVersion": "3.1",
        "metricName": "demographic_parity",
        "metricValue": 0.2,
        "threshold": 0.1,
        "passesThreshold": False,
        "protectedAttribute": "gender",
        "privilegedGroup": "male",
        "unprivilegedGroup": "female",
        "sampleSize": 2000,
        "confidenceInterval": {"lower": 0.15, "upper": 0.25},
        "rawPayload": {"difference": 0.2, "by_group": {"male": 0.6, "female": 0.4}},
        "signalTimestamp": now_iso(minutes=-1),
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}


def post_signal(api, **overrides: Any):
    return api.post(SIGNALS, signal_body(**overrides), format="json")
