"""POST /export's body (docs/reference/reports.md), a request body model (config.bodymodels),
and the ExportRequest export_request takes, built from it. Unknown keys are refused: a misspelt
`filters` must not silently produce an unfiltered report."""

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Field

from compliance.catalogue import TEMPLATE_IDS, Format
from config.bodymodels import BodyModel, body_parse, failure
from config.bodyrules import Bound, text
from config.inputs import parse_day_only, shift_days, time_range

DEFAULT_DAYS = 30
# The longest period a report covers (ten years and a leap day or two): a report's cost grows
# with its period (a trend point per month), docs/reference/limits.md, "Exports".
MAX_PERIOD_DAYS = 3660
Category = Literal["CALIBRATED", "OVERTRUSTING", "UNDERTRUSTING"]
CATEGORIES = list(get_args(Category))
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


_VALUES = Field(max_length=FILTER_VALUES_MAX)
_VALUE = text(FILTER_VALUE_LENGTH)


class ExportFiltersInput(BodyModel):
    model_config = ConfigDict(extra="forbid")
    user_ids: Annotated[
        list[Annotated[str, _VALUE]] | None, _VALUES, Field(description="Only these reviewers' decisions")
    ] = None
    model_ids: Annotated[
        list[Annotated[str, _VALUE]] | None, _VALUES, Field(description="Only these models' decisions")
    ] = None
    calibration: Annotated[
        list[Category] | None,
        _VALUES,
        Field(description="Only these categories"),
    ] = None

    def selected(self) -> dict[str, list[str]]:
        """Only the filters given with values, each value once."""
        given = {"user_ids": self.user_ids, "model_ids": self.model_ids, "calibration": self.calibration}
        return {name: list(dict.fromkeys(values)) for name, values in given.items() if values}


class ExportPeriodInput(BodyModel):
    model_config = ConfigDict(extra="forbid")
    from_: Annotated[Bound | None, Field(alias="from")] = None
    to: Bound | None = None


class ExportInput(BodyModel):
    """POST /export's body: the report template, its format, the period and the filters."""

    model_config = ConfigDict(extra="forbid")
    template: Literal[tuple(TEMPLATE_IDS)]  # type: ignore[valid-type]  # the catalogue's ids
    format: Format = "pdf"
    time_period: Annotated[
        ExportPeriodInput | None, Field(description="Default: the last 30 days, today included")
    ] = None
    filters: ExportFiltersInput = ExportFiltersInput()

    def request(self) -> ExportRequest:
        """The period with its defaults (docs/reference/reports.md): `to` today, `from` 29 days
        before the day `to` falls in; at most MAX_PERIOD_DAYS. VALIDATION_ERROR otherwise."""
        period = self.time_period or ExportPeriodInput()
        raw_from, raw_to = period.from_, period.to
        today = dt.datetime.now(dt.UTC).date()
        if raw_to is None:
            raw_to = today.isoformat()
        if raw_from is None:
            end_day = today if not parse_day_only(raw_to) else dt.date.fromisoformat(raw_to.strip())
            raw_from = shift_days(end_day, -(DEFAULT_DAYS - 1)).isoformat()
        start, end = time_range(raw_from, raw_to, from_name="time_period.from", to_name="time_period.to")
        if start is None or end is None:  # both bounds are given, so both are parsed
            raise failure([{"field": "time_period", "message": "must have both bounds"}])
        if end - start > dt.timedelta(days=MAX_PERIOD_DAYS):
            raise failure([{"field": "time_period", "message": f"must span at most {MAX_PERIOD_DAYS} days"}])
        if start - dt.datetime.min.replace(tzinfo=dt.UTC) < end - start:
            # A report compares with the period of the same length just before it
            # (compliance/evidence.py, previous_period), which must not begin before year 1.
            raise failure(
                [{"field": "time_period", "message": "must begin at least its own length after 0001-01-01"}]
            )
        return ExportRequest(
            template=self.template,
            format=self.format,
            start=start,
            end=end,
            time_period={"from": raw_from, "to": raw_to},
            filters=self.filters.selected(),
        )


def export_request_parse(body: object) -> ExportRequest:
    return body_parse(ExportInput, body).request()
