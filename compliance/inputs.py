"""POST /export's body (docs/reference/reports.md), validated into what export_request takes. Unknown keys are
refused: a misspelt `filters` must not silently produce an unfiltered report."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from compliance.catalogue import FORMATS, TEMPLATE_IDS
from config.bodies import Body, Field, Problems, parse
from config.exceptions import ValidationFailed
from config.inputs import parse_day_only, shift_days, time_range

DEFAULT_DAYS = 30
# The longest period a report covers (ten years and a leap day or two): a report's cost grows
# with its period (a trend point per month), docs/reference/limits.md, "Exports".
MAX_PERIOD_DAYS = 3660
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


def _distinct(values: dict[str, Any], problems: Problems) -> None:
    """Only the filters given with values, each value once."""
    for key in list(values):
        if values[key]:
            values[key] = list(dict.fromkeys(values[key]))
        else:
            del values[key]


def _filter_list(name: str, item: Field, help: str) -> Field:
    return Field(name, "list", max_length=FILTER_VALUES_MAX, item=item, help=help)


FILTERS = Body(
    "ExportFiltersInput",
    (
        _filter_list(
            "user_ids", Field("", max_length=FILTER_VALUE_LENGTH), "Only these reviewers' decisions"
        ),
        _filter_list("model_ids", Field("", max_length=FILTER_VALUE_LENGTH), "Only these models' decisions"),
        _filter_list("calibration", Field("", "choice", choices=tuple(CATEGORIES)), "Only these categories"),
    ),
    checks=(_distinct,),
    unknown=False,
)

TIME_PERIOD = Body("ExportPeriodInput", (Field("from", "bound"), Field("to", "bound")), unknown=False)


def _period(values: dict[str, Any], problems: Problems) -> None:
    """The period with its defaults (docs/reference/reports.md): `to` today, `from` 29 days before
    the day `to` falls in; at most MAX_PERIOD_DAYS."""
    if problems.errors:
        return
    raw = values["time_period"] or {}
    raw_from, raw_to = raw.get("from"), raw.get("to")
    today = dt.datetime.now(dt.UTC).date()
    if raw_to is None:
        raw_to = today.isoformat()
    if raw_from is None:
        end_day = today if not parse_day_only(raw_to) else dt.date.fromisoformat(raw_to.strip())
        raw_from = shift_days(end_day, -(DEFAULT_DAYS - 1)).isoformat()
    try:
        start, end = time_range(raw_from, raw_to, from_name="time_period.from", to_name="time_period.to")
    except ValidationFailed as exc:
        problems.errors.extend(exc.errors)
        return
    assert start is not None and end is not None
    if end - start > dt.timedelta(days=MAX_PERIOD_DAYS):
        problems.add("time_period", f"must span at most {MAX_PERIOD_DAYS} days")
        return
    if start - dt.datetime.min.replace(tzinfo=dt.UTC) < end - start:
        # A report compares with the period of the same length just before it
        # (compliance/evidence.py, previous_period), which must not begin before year 1.
        problems.add("time_period", "must begin at least its own length after 0001-01-01")
        return
    values["start"], values["end"] = start, end
    values["time_period"] = {"from": raw_from, "to": raw_to}


EXPORT = Body(
    "ExportInput",
    (
        Field("template", "choice", required=True, choices=tuple(TEMPLATE_IDS)),
        Field("format", "choice", choices=tuple(FORMATS), default="pdf"),
        Field("time_period", "object", body=TIME_PERIOD, help="Default: the last 30 days, today included"),
        Field("filters", "object", body=FILTERS, default=dict),
    ),
    checks=(_period,),
    unknown=False,
    doc="POST /export's body: the report template, its format, the period and the filters.",
)


def export_request_parse(body: Any) -> ExportRequest:
    return ExportRequest(**parse(EXPORT, body))
