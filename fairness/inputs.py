"""The bodies of POST /model-fairness-signals and PATCH /bias/amplification/:id
(docs/reference/fairness.md), as request body models (config.bodymodels). A signal is checked in
the order of Ingestion checks in order: source, metric, then every other field (VALIDATION_ERROR).
Time rules and the hourly limit belong to the service."""

import datetime as dt
import json
from typing import Annotated, Any, Self

from pydantic import Field, model_validator

from config.bodymodels import BodyModel
from config.bodyrules import Choice, Integer, JsonObject, Number, Text, Timestamp, problem
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


class ConfidenceIntervalInput(BodyModel):
    # Kept as sent (an int stays an int on the way back).
    lower: Annotated[float, Number(keep=True)]
    upper: Annotated[float, Number(keep=True)]

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.lower > self.upper:
            raise problem("lower must not exceed upper")
        return self

    def stored(self) -> dict[str, float]:
        return {"lower": self.lower, "upper": self.upper}


_TEXT = Text(MAX_STRING)


class SignalInput(BodyModel):
    """The body of POST /model-fairness-signals, checked in this order: externalToolId, metricName,
    every other field, signalTimestamp, then the hourly limit."""

    # docs/reference/fairness.md, Ingestion checks in order: externalToolId
    # (FAIRNESS_INVALID_SOURCE), then metricName (FAIRNESS_INVALID_METRIC), each answered alone,
    # then every other field together.
    refusals = {"externalToolId": InvalidSource, "metricName": InvalidMetric}

    external_tool_id: Annotated[str, Choice(tuple(TOOLS)), Field(alias="externalToolId")]
    metric_name: Annotated[str, Choice(tuple(METRICS)), Field(alias="metricName")]
    external_tool_version: Annotated[str | None, _TEXT, Field(alias="externalToolVersion")] = None
    model_id: Annotated[str, _TEXT, Field(alias="modelId")]
    model_version: Annotated[str | None, _TEXT, Field(alias="modelVersion")] = None
    metric_value: Annotated[float, Number(0, 1), Field(alias="metricValue")]
    threshold: Annotated[float | None, Number()] = None
    passes_threshold: Annotated[bool | None, Field(alias="passesThreshold")] = None
    protected_attribute: Annotated[str, _TEXT, Field(alias="protectedAttribute")]
    privileged_group: Annotated[str | None, _TEXT, Field(alias="privilegedGroup")] = None
    unprivileged_group: Annotated[str | None, _TEXT, Field(alias="unprivilegedGroup")] = None
    sample_size: Annotated[int | None, Integer(minimum=0), Field(alias="sampleSize")] = None
    confidence_interval: Annotated[ConfidenceIntervalInput | None, Field(alias="confidenceInterval")] = None
    raw_payload: Annotated[
        dict[str, Any],  # Any: the tool's own JSON, kept as sent
        JsonObject(),
        Field(alias="rawPayload", description="The tool's own output, kept as sent"),
    ]
    signal_timestamp: Annotated[dt.datetime, Timestamp(), Field(alias="signalTimestamp")]

    @model_validator(mode="after")
    def _groups_differ(self) -> Self:
        if self.privileged_group is not None and self.privileged_group == self.unprivileged_group:
            raise problem("must differ from privilegedGroup", at="unprivilegedGroup")
        return self

    @property
    def raw_payload_json(self) -> str:
        """The tool's output as stored: compact JSON, characters as sent."""
        return json.dumps(self.raw_payload, ensure_ascii=False, separators=(",", ":"))


class AlertPatchInput(BodyModel):
    """docs/reference/fairness.md, Alert status"""

    status: Annotated[str, Choice(tuple(AlertStatus.values))]
    resolution_notes: Annotated[
        str | None, Text(10_000, allow_blank=True), Field(alias="resolutionNotes")
    ] = None
    resolved_by: Annotated[str | None, Text(255, allow_blank=True), Field(alias="resolvedBy")] = None
