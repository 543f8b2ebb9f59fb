"""Parsing of a fairness signal body in the order of docs/reference/fairness.md, Ingestion checks in
order: source, metric, then every other field (VALIDATION_ERROR). Time rules and the hourly limit
belong to the service."""

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from config.bodies import Body, Field, Problems, parse
from fairness.exceptions import InvalidMetric, InvalidSource
from fairness.models import AlertStatus

TOOLS = ["ibm_aif360", "fairlearn", "aws_clarify", "google_vertex", "custom"]
METRIC_CATEGORIES = {
    "group_fairness": [
        "demographic_parity",
        "equalized_odds",
        "equal_opportunity",
        "disparate_impact",
        "statistical_parity_difference",
    ],
    "individual_fairness": ["consistency", "flip_rate"],
    "calibration": ["calibration_error", "predictive_parity"],
    "custom": ["custom"],
}
METRICS = [name for names in METRIC_CATEGORIES.values() for name in names]
MAX_STRING = 255


@dataclass(frozen=True)
class SignalInput:
    external_tool_id: str
    external_tool_version: str | None
    model_id: str
    model_version: str | None
    metric_name: str
    metric_value: float
    threshold: float | None
    passes_threshold: bool | None
    protected_attribute: str
    privileged_group: str | None
    unprivileged_group: str | None
    sample_size: int | None
    confidence_interval: dict[str, Any] | None
    raw_payload_json: str
    signal_timestamp: dt.datetime


def _groups_differ(values: dict[str, Any], problems: Problems) -> None:
    privileged, unprivileged = values["privileged_group"], values["unprivileged_group"]
    if privileged is not None and privileged == unprivileged:
        problems.add("unprivilegedGroup", "must differ from privilegedGroup")


def _interval_ordered(values: dict[str, Any], problems: Problems) -> None:
    if not problems.has("lower") and not problems.has("upper") and values["lower"] > values["upper"]:
        problems.add("", "lower must not exceed upper")


# Kept as sent (an int stays an int on the way back).
CONFIDENCE_INTERVAL = Body(
    "ConfidenceIntervalInput",
    (Field("lower", "number", required=True, keep=True), Field("upper", "number", required=True, keep=True)),
    checks=(_interval_ordered,),
)


def _text(name: str, attr: str, *, required: bool = False) -> Field:
    return Field(name, attr=attr, required=required, max_length=MAX_STRING)


# docs/reference/fairness.md, Ingestion checks in order: externalToolId (FAIRNESS_INVALID_SOURCE),
# then metricName (FAIRNESS_INVALID_METRIC), each answered alone, then every other field together.
SIGNAL = Body(
    "SignalInput",
    (
        Field(
            "externalToolId",
            "choice",
            attr="external_tool_id",
            required=True,
            choices=tuple(TOOLS),
            refusal=InvalidSource,
        ),
        Field(
            "metricName",
            "choice",
            attr="metric_name",
            required=True,
            choices=tuple(METRICS),
            refusal=InvalidMetric,
        ),
        _text("externalToolVersion", "external_tool_version"),
        _text("modelId", "model_id", required=True),
        _text("modelVersion", "model_version"),
        Field("metricValue", "number", attr="metric_value", required=True, minimum=0, maximum=1),
        Field("threshold", "number"),
        Field("passesThreshold", "bool", attr="passes_threshold"),
        _text("protectedAttribute", "protected_attribute", required=True),
        _text("privilegedGroup", "privileged_group"),
        _text("unprivilegedGroup", "unprivileged_group"),
        Field("sampleSize", "integer", attr="sample_size", minimum=0),
        Field("confidenceInterval", "object", attr="confidence_interval", body=CONFIDENCE_INTERVAL),
        Field(
            "rawPayload",
            "object",
            attr="raw_payload",
            required=True,
            help="The tool's own output, kept as sent",
        ),
        Field("signalTimestamp", "timestamp", attr="signal_timestamp", required=True),
    ),
    checks=(_groups_differ,),
    doc="The body of POST /model-fairness-signals, checked in this order: externalToolId, metricName, "
    "every other field, signalTimestamp, then the hourly limit.",
)


def signal_input_parse(data: Any) -> SignalInput:
    values = parse(SIGNAL, data)
    raw = values.pop("raw_payload")
    return SignalInput(**values, raw_payload_json=json.dumps(raw, ensure_ascii=False, separators=(",", ":")))


ALERT_PATCH = Body(
    "AlertPatchInput",
    (
        Field("status", "choice", required=True, choices=tuple(AlertStatus.values)),
        Field("resolutionNotes", attr="resolution_notes", max_length=10_000, allow_blank=True),
        Field("resolvedBy", attr="resolved_by", max_length=255, allow_blank=True),
    ),
    doc="docs/reference/fairness.md, Alert status",
)
