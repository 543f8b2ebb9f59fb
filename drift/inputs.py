"""The bodies of the drift endpoints (docs/reference/drift.md, The API), as request body models
(config.bodymodels): every field's own rule first, then the rules that span fields. A key a
body does not declare answers VALIDATION_ERROR naming it."""

from typing import Annotated, Literal

from pydantic import (
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from audit.fields import MODEL_ID_MAX, MODEL_VERSION_MAX, USER_ID_MAX
from config.bodymodels import BodyModel, failure
from drift.charts import CHARTS, PROBE_SPRT

SEED_MAX = 2**53 - 1
NOTE_MAX = 2000
NAME_MAX = 200
# A JSON number, integer or not (strict: no string, no boolean), kept as a double: one type, so
# a refusal names the field once and says "must be a number ..." (an int | float union named
# both members and called the range an integer's).
Number = float


def _above_zero(maximum: int) -> WithJsonSchema:
    """The schema of a number in (0, maximum] as OpenAPI 3.0 states an exclusive bound (a flag
    beside the bound): pydantic writes JSON Schema 2020's form, which 3.0 tools refuse."""
    return WithJsonSchema({"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": maximum})


def _open_from_zero(maximum: float) -> WithJsonSchema:
    """The same for a number in (0, maximum)."""
    return WithJsonSchema(
        {
            "type": "number",
            "minimum": 0,
            "exclusiveMinimum": True,
            "maximum": maximum,
            "exclusiveMaximum": True,
        }
    )


Chart = Literal["over_reliance", "under_reliance", "ai_calibration_up", "ai_calibration_down", "probe_sprt"]
assert set(Chart.__args__) == set(CHARTS)  # type: ignore[attr-defined]
Disposition = Literal[
    "false_alarm", "reviewer_coached", "workload_adjusted", "model_retrained", "use_suspended", "other"
]


class _Strict(BodyModel):
    model_config = ConfigDict(extra="forbid")


class BaselineIn(_Strict):
    mode: Literal["next", "previous"] = "next"
    decisions: Annotated[StrictInt, Field(ge=50, le=10_000)] = 200


class SprtIn(_Strict):
    p0: Annotated[Number, Field(gt=0, lt=1), _open_from_zero(1)] = 0.10
    p1: Annotated[Number, Field(gt=0, lt=1), _open_from_zero(1)] = 0.30
    alpha: Annotated[Number, Field(gt=0, lt=0.5), _open_from_zero(0.5)] = 0.05
    beta: Annotated[Number, Field(gt=0, lt=0.5), _open_from_zero(0.5)] = 0.10

    @model_validator(mode="after")
    def _ordered(self) -> "SprtIn":
        if self.p1 <= self.p0:
            raise failure([{"field": "sprt.p1", "message": "must be greater than p0"}])
        return self


class MonitorCreateInput(_Strict):
    chart: Chart
    scope: Literal["user", "organization"]
    user_id: Annotated[str, StringConstraints(min_length=1, max_length=USER_ID_MAX)] | None = None
    model_id: Annotated[str, StringConstraints(min_length=1, max_length=MODEL_ID_MAX)] | None = None
    model_version: Annotated[str, StringConstraints(min_length=1, max_length=MODEL_VERSION_MAX)] | None = None
    name: Annotated[str, StringConstraints(min_length=1, max_length=NAME_MAX)] | None = None
    odds_ratio: Annotated[Number, Field(gt=0, le=100), _above_zero(100)] | None = None
    h: Annotated[Number, Field(gt=0, le=1000), _above_zero(1000)] | None = None
    arl0_target: Annotated[StrictInt, Field(ge=100, le=100_000)] | None = None
    baseline: BaselineIn | None = None
    sprt: SprtIn | None = None
    seed: Annotated[StrictInt, Field(ge=0, le=SEED_MAX)] | None = None
    runs: Annotated[StrictInt, Field(ge=1000, le=20_000)] = 2000
    enabled: StrictBool = True

    @model_validator(mode="after")
    def _across(self) -> "MonitorCreateInput":
        problems = _across_problems(self)
        if problems:
            raise failure([{"field": f, "message": m} for f, m in problems])
        return self


def _across_problems(body: MonitorCreateInput) -> list[tuple[str, str]]:
    """The rules that span fields, in the order of the monitor's table."""
    out: list[tuple[str, str]] = []
    if body.odds_ratio == 1:
        out.append(("odds_ratio", "must not be 1"))
    if body.scope == "user" and body.user_id is None:
        out.append(("user_id", "is required with scope user"))
    if body.scope == "organization" and body.user_id is not None:
        out.append(("user_id", "is allowed with scope user only"))
    if body.model_version is not None and body.model_id is None:
        out.append(("model_version", "is allowed with model_id only"))
    if body.chart == PROBE_SPRT:
        for name in ("odds_ratio", "h", "arl0_target", "baseline"):
            if getattr(body, name) is not None:
                out.append((name, "is not taken by probe_sprt"))
        return out
    if body.sprt is not None:
        out.append(("sprt", "is taken by probe_sprt only"))
    if body.h is None and body.arl0_target is None:
        out.append(("h", "is required (or arl0_target)"))
    elif body.h is not None and body.arl0_target is not None:
        out.append(("arl0_target", "is not taken with h"))
    return out


class MonitorUpdateInput(_Strict):
    partial = True
    name: Annotated[str, StringConstraints(min_length=1, max_length=NAME_MAX)] | None = None
    enabled: StrictBool | None = None
    h: Annotated[Number, Field(gt=0, le=1000), _above_zero(1000)] | None = None


class CalibrateInput(_Strict):
    arl0_target: Annotated[StrictInt, Field(ge=100, le=100_000)] | None = None
    runs: Annotated[StrictInt, Field(ge=1000, le=20_000)] = 2000
    seed: Annotated[StrictInt, Field(ge=0, le=SEED_MAX)] | None = None
    apply: StrictBool = True


class AcknowledgeInput(_Strict):
    disposition: Disposition
    note: Annotated[str, StringConstraints(max_length=NOTE_MAX)] | None = None
    acknowledged_by: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None

    @model_validator(mode="after")
    def _note_with_other(self) -> "AcknowledgeInput":
        if self.disposition == "other" and not (self.note or "").strip():
            raise failure([{"field": "note", "message": "is required and not blank with disposition other"}])
        return self
