"""Parsing of a fairness signal body in the order of docs/reference/fairness.md, Ingestion checks in
order: source, metric, then every other field (VALIDATION_ERROR). Time rules and the hourly limit
belong to the service."""

import datetime as dt
import json
import math
from dataclasses import dataclass
from typing import Any

from config.api import require_object
from config.exceptions import ValidationFailed
from config.timeutils import parse_timestamp
from fairness.exceptions import InvalidMetric, InvalidSource

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


def _is_number(value: Any) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer beyond float range
        return False


class _Errors:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append({"field": field, "message": message})


def _string(body: dict, name: str, errors: _Errors, *, required: bool) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            errors.add(name, "is required")
        return None
    if not isinstance(value, str):
        errors.add(name, "must be a string")
        return None
    if required and not value.strip():
        errors.add(name, "must not be blank")
        return None
    if len(value) > MAX_STRING:
        errors.add(name, f"must be at most {MAX_STRING} characters")
        return None
    return value


def _number(body: dict, name: str, errors: _Errors, *, required: bool, unit: bool = False) -> float | None:
    value = body.get(name)
    if value is None:
        if required:
            errors.add(name, "is required")
        return None
    if not _is_number(value):
        errors.add(name, "must be a number")
        return None
    if unit and not 0 <= value <= 1:
        errors.add(name, "must be between 0 and 1")
        return None
    return float(value)


def signal_input_parse(data: Any) -> SignalInput:
    body = require_object(data)

    tool = body.get("externalToolId")
    if not isinstance(tool, str) or tool not in TOOLS:
        shown = "missing" if tool is None else f"{tool!r}" if isinstance(tool, str) else "not a string"
        raise InvalidSource(
            f"externalToolId {shown} is not one of: {', '.join(TOOLS)}",
            errors=[{"field": "externalToolId", "message": f"must be one of: {', '.join(TOOLS)}"}],
        )
    metric = body.get("metricName")
    if not isinstance(metric, str) or metric not in METRICS:
        shown = "missing" if metric is None else f"{metric!r}" if isinstance(metric, str) else "not a string"
        raise InvalidMetric(
            f"metricName {shown} is not a supported metric: {', '.join(METRICS)}",
            errors=[{"field": "metricName", "message": f"must be one of: {', '.join(METRICS)}"}],
        )

    errors = _Errors()
    tool_version = _string(body, "externalToolVersion", errors, required=False)
    model_id = _string(body, "modelId", errors, required=True)
    model_version = _string(body, "modelVersion", errors, required=False)
    metric_value = _number(body, "metricValue", errors, required=True, unit=True)
    threshold = _number(body, "threshold", errors, required=False)
    passes = body.get("passesThreshold")
    if passes is not None and not isinstance(passes, bool):
        errors.add("passesThreshold", "must be a boolean")
        passes = None
    attribute = _string(body, "protectedAttribute", errors, required=True)
    privileged = _string(body, "privilegedGroup", errors, required=False)
    unprivileged = _string(body, "unprivilegedGroup", errors, required=False)
    if privileged is not None and unprivileged is not None and privileged == unprivileged:
        errors.add("unprivilegedGroup", "must differ from privilegedGroup")

    sample_size = body.get("sampleSize")
    if sample_size is not None and (
        not isinstance(sample_size, int) or isinstance(sample_size, bool) or sample_size < 0
    ):
        errors.add("sampleSize", "must be an integer >= 0")
        sample_size = None
    elif isinstance(sample_size, int) and sample_size > 2**63 - 1:
        errors.add("sampleSize", "is too large")
        sample_size = None

    interval = body.get("confidenceInterval")
    confidence_interval = None
    if interval is not None:
        if not isinstance(interval, dict):
            errors.add("confidenceInterval", "must be an object with numeric lower and upper")
        else:
            lower, upper = interval.get("lower"), interval.get("upper")
            bad = False
            for key, value in (("lower", lower), ("upper", upper)):
                if not _is_number(value):
                    errors.add(f"confidenceInterval.{key}", "is required and must be a number")
                    bad = True
            if not bad:
                low, high = float(lower), float(upper)  # type: ignore[arg-type]
                if low > high:
                    errors.add("confidenceInterval", "lower must not exceed upper")
                else:
                    # Kept as sent (an int stays an int on the way back).
                    confidence_interval = {"lower": lower, "upper": upper}

    raw = body.get("rawPayload")
    raw_json = ""
    if raw is None:
        errors.add("rawPayload", "is required")
    elif not isinstance(raw, dict):
        errors.add("rawPayload", "must be an object")
    else:
        try:
            raw_json = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
        except RecursionError:
            errors.add("rawPayload", "is nested too deeply")

    signal_ts = None
    raw_ts = body.get("signalTimestamp")
    if raw_ts is None:
        errors.add("signalTimestamp", "is required")
    elif not isinstance(raw_ts, str):
        errors.add("signalTimestamp", "must be an ISO 8601 string")
    else:
        try:
            signal_ts = parse_timestamp(raw_ts)
        except (OverflowError, ValueError):  # e.g. year 1 with a positive offset
            signal_ts = None
        if signal_ts is None:
            errors.add("signalTimestamp", "is not a valid ISO 8601 timestamp")

    if errors.items:
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors.items[:5])
        raise ValidationFailed(detail, errors=errors.items)

    assert (
        model_id is not None and attribute is not None and metric_value is not None and signal_ts is not None
    )
    return SignalInput(
        external_tool_id=tool,
        external_tool_version=tool_version,
        model_id=model_id,
        model_version=model_version,
        metric_name=metric,
        metric_value=metric_value,
        threshold=threshold,
        passes_threshold=passes,
        protected_attribute=attribute,
        privileged_group=privileged,
        unprivileged_group=unprivileged,
        sample_size=sample_size,
        confidence_interval=confidence_interval,
        raw_payload_json=raw_json,
        signal_timestamp=signal_ts,
    )
