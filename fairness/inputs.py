"""The bodies of POST /model-fairness-signals and PATCH /bias/amplification/:id
(docs/reference/fairness.md), as request body models (config.bodymodels). A signal is checked in
the order of Ingestion checks in order: source, metric, then every other field (VALIDATION_ERROR).
Time rules and the hourly limit belong to the service."""

import json
from typing import Annotated, Literal, Self, get_args

from pydantic import Field, StrictInt, model_validator

from config.bodymodels import BodyModel
from config.bodyrules import MAX_BIGINT, Timestamp, json_object, problem, text
from config.jsondoc import JSONObject
from fairness.exceptions import InvalidMetric, InvalidSource
from fairness.models import AlertStatus

Tool = Literal["ibm_aif360", "fairlearn", "aws_clarify", "google_vertex", "custom"]
TOOLS = list(get_args(Tool))
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
    lower: float
    upper: float

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.lower > self.upper:
            raise problem("lower must not exceed upper")
        return self

    def stored(self) -> dict[str, float]:
        return {"lower": self.lower, "upper": self.upper}


_TEXT = text(MAX_STRING)


class SignalInput(BodyModel):
    """The body of POST /model-fairness-signals, checked in this order: externalToolId, metricName,
    every other field, signalTimestamp, then the hourly limit."""

    # docs/reference/fairness.md, Ingestion checks in order: externalToolId
    # (FAIRNESS_INVALID_SOURCE), then metricName (FAIRNESS_INVALID_METRIC), each answered alone,
    # then every other field together.
    refusals = {"externalToolId": InvalidSource, "metricName": InvalidMetric}

    external_tool_id: Annotated[Tool, Field(alias="externalToolId")]
    metric_name: Annotated[Literal[tuple(METRICS)], Field(alias="metricName")]  # type: ignore[valid-type]
    external_tool_version: Annotated[str | None, _TEXT, Field(alias="externalToolVersion")] = None
    model_id: Annotated[str, _TEXT, Field(alias="modelId")]
    model_version: Annotated[str | None, _TEXT, Field(alias="modelVersion")] = None
    metric_value: Annotated[float, Field(ge=0, le=1, alias="metricValue")]
    threshold: float | None = None
    passes_threshold: Annotated[bool | None, Field(alias="passesThreshold")] = None
    protected_attribute: Annotated[str, _TEXT, Field(alias="protectedAttribute")]
    privileged_group: Annotated[str | None, _TEXT, Field(alias="privilegedGroup")] = None
    unprivileged_group: Annotated[str | None, _TEXT, Field(alias="unprivilegedGroup")] = None
    sample_size: Annotated[StrictInt | None, Field(ge=0, le=MAX_BIGINT, alias="sampleSize")] = None
    confidence_interval: Annotated[ConfidenceIntervalInput | None, Field(alias="confidenceInterval")] = None
    raw_payload: Annotated[
        JSONObject,  # the tool's own JSON, kept as sent
        json_object(),
        Field(alias="rawPayload", description="The tool's own output, kept as sent"),
    ]
    signal_timestamp: Annotated[Timestamp, Field(alias="signalTimestamp")]

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

    status: Literal[tuple(AlertStatus.values)]  # type: ignore[valid-type]  # the statuses
    resolution_notes: Annotated[str | None, text(10_000, blank=True), Field(alias="resolutionNotes")] = None
    resolved_by: Annotated[str | None, text(255, blank=True), Field(alias="resolvedBy")] = None
