"""The body of POST /trust-score (docs/reference/calibration.md), declared once
(config.bodies). POST /calibrate's body is the decision's (audit.inputs)."""

from typing import Any

from calibration import rules
from config.bodies import Body, Field, Problems
from config.exceptions import ValidationFailed
from config.inputs import day_range, exact_window

MAX_RANGE_DAYS = 3660
ID_MAX = 256


def _window(values: dict[str, Any], problems: Problems) -> None:
    """The days of the daily figures, or the exact window when a bound is a timestamp inside a
    UTC day (docs/reference/conventions.md, Time bounds): `exact` is then (start, end)."""
    if problems.has("from") or problems.has("to"):
        return
    raw_from, raw_to = values.pop("from"), values.pop("to")
    default_days = rules.window_days()
    try:
        values["exact"] = exact_window(raw_from, raw_to, default_days=default_days, max_days=MAX_RANGE_DAYS)
        both = raw_from is not None and raw_to is not None
        values["days"] = day_range(
            None if values["exact"] else raw_from,
            None if values["exact"] else raw_to,
            default_days=default_days,
            max_days=MAX_RANGE_DAYS if both else None,
        )
    except ValidationFailed as exc:
        problems.errors.extend(exc.errors)


TRUST_SCORE = Body(
    "TrustScoreInput",
    (
        Field("user_id", max_length=ID_MAX, help="One reviewer's score; the organisation's without it"),
        Field("model_id", max_length=ID_MAX),
        Field("from", "bound", help="Default: 29 days before `to`"),
        Field("to", "bound", help="Default: today"),
    ),
    checks=(_window,),
)
