"""POST /export's body (docs/reference/reports.md), validated into what export_request takes. Unknown keys are
refused: a misspelt `filters` must not silently produce an unfiltered report."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from compliance.catalogue import FORMATS, TEMPLATE_IDS
from config.exceptions import ValidationFailed
from config.inputs import parse_day_only, shift_days, time_range

DEFAULT_DAYS = 30
# The longest period a report covers (ten years and a leap day or two): a report's cost grows
# with its period (a trend point per month), docs/reference/limits.md, "Exports".
MAX_PERIOD_DAYS = 3660
FILTER_KEYS = ("user_ids", "model_ids", "calibration")
CATEGORIES = ["CALIBRATED", "OVERTRUSTING", "UNDERTRUSTING"]
FILTER_VALUES_MAX = 1000
FILTER_VALUE_LENGTH = 256


@dataclass(frozen=True)
class ExportRequest:
    template: str
    format: str
    start: dt.datetime
    end: dt.datetime
    time_period: dict[str, str]
    filters: dict[str, list[str]]


class _Errors:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append({"field": field, "message": message})

    def raise_any(self) -> None:
        if self.items:
            detail = "; ".join(f"{e['field']}: {e['message']}" for e in self.items[:5])
            raise ValidationFailed(detail, errors=self.items)


def _choice(body: dict[str, Any], name: str, choices: list[str], default: str | None, errors: _Errors) -> str:
    value = body.get(name, default)
    if value is None:
        errors.add(name, f"is required (one of {', '.join(choices)})")
    elif not isinstance(value, str) or value not in choices:
        errors.add(name, f"must be one of {', '.join(choices)}")
    return value if isinstance(value, str) else ""


def _filters(raw: Any, errors: _Errors) -> dict[str, list[str]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errors.add("filters", "must be an object")
        return {}
    out: dict[str, list[str]] = {}
    for key in raw:
        if key not in FILTER_KEYS:
            errors.add(f"filters.{key}", f"unknown filter (known: {', '.join(FILTER_KEYS)})")
    for key in FILTER_KEYS:
        values = raw.get(key)
        if values is None:
            continue
        name = f"filters.{key}"
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            errors.add(name, "must be an array of non-empty strings")
            continue
        if len(values) > FILTER_VALUES_MAX:
            errors.add(name, f"at most {FILTER_VALUES_MAX} values")
            continue
        if any(len(v) > FILTER_VALUE_LENGTH for v in values):
            errors.add(name, f"values are at most {FILTER_VALUE_LENGTH} characters")
            continue
        if key == "calibration":
            unknown = [v for v in values if v not in CATEGORIES]
            if unknown:
                errors.add(name, f"unknown categories {unknown[:3]} (known: {', '.join(CATEGORIES)})")
                continue
        if values:
            out[key] = list(dict.fromkeys(values))
    return out


def _period(raw: Any, errors: _Errors) -> tuple[dt.datetime, dt.datetime, dict[str, str]] | None:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        errors.add("time_period", "must be an object with from and to")
        return None
    for key in raw:
        if key not in ("from", "to"):
            errors.add(f"time_period.{key}", "unknown field (known: from, to)")
    raw_from, raw_to = raw.get("from"), raw.get("to")
    for key, value in (("from", raw_from), ("to", raw_to)):
        if value is not None and not isinstance(value, str):
            errors.add(f"time_period.{key}", "must be a date (YYYY-MM-DD) or an ISO 8601 timestamp")
    if errors.items:
        return None
    today = dt.datetime.now(dt.UTC).date()
    if raw_to is None:
        raw_to = today.isoformat()
    if raw_from is None:
        end_day = today if not parse_day_only(raw_to) else dt.date.fromisoformat(raw_to.strip())
        raw_from = shift_days(end_day, -(DEFAULT_DAYS - 1)).isoformat()
    try:
        start, end = time_range(raw_from, raw_to, from_name="time_period.from", to_name="time_period.to")
    except ValidationFailed as exc:
        errors.items.extend(exc.errors)
        return None
    assert start is not None and end is not None
    if end - start > dt.timedelta(days=MAX_PERIOD_DAYS):
        errors.add("time_period", f"must span at most {MAX_PERIOD_DAYS} days")
        return None
    return start, end, {"from": raw_from, "to": raw_to}


def export_request_parse(body: dict[str, Any]) -> ExportRequest:
    errors = _Errors()
    for key in body:
        if key not in ("template", "format", "time_period", "filters"):
            errors.add(key, "unknown field (known: template, format, time_period, filters)")
    template = _choice(body, "template", TEMPLATE_IDS, None, errors)
    format = _choice(body, "format", FORMATS, "pdf", errors)
    filters = _filters(body.get("filters"), errors)
    period = _period(body.get("time_period"), errors)
    errors.raise_any()
    assert period is not None
    start, end, echo = period
    return ExportRequest(
        template=template, format=format, start=start, end=end, time_period=echo, filters=filters
    )
