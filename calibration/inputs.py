"""The body of POST /trust-score (docs/reference/calibration.md), a request body model
(config.bodymodels). POST /calibrate's body is the decision's (audit.inputs.DecisionInput)."""

import datetime as dt
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from calibration import rules
from config.bodymodels import BodyModel
from config.bodyrules import Bound, text
from config.inputs import day_range, exact_window

MAX_RANGE_DAYS = 3660
ID_MAX = 256


@dataclass(frozen=True)
class Window:
    """The days of the daily figures, and the exact [start, end) when a bound is a timestamp
    inside a UTC day (docs/reference/conventions.md, Time bounds)."""

    days: tuple[dt.date, dt.date]
    exact: tuple[dt.datetime, dt.datetime] | None


class TrustScoreInput(BodyModel):
    user_id: Annotated[
        str | None, text(ID_MAX), Field(description="One reviewer's score; the organisation's without it")
    ] = None
    model_id: Annotated[str | None, text(ID_MAX)] = None
    from_: Annotated[Bound | None, Field(alias="from", description="Default: 29 days before `to`")] = None
    to: Annotated[Bound | None, Field(description="Default: today")] = None

    def window(self) -> Window:
        """The window the bounds name, or VALIDATION_ERROR (`from` after `to`, too long)."""
        default_days = rules.window_days()
        exact = exact_window(self.from_, self.to, default_days=default_days, max_days=MAX_RANGE_DAYS)
        both = self.from_ is not None and self.to is not None
        days = day_range(
            None if exact else self.from_,
            None if exact else self.to,
            default_days=default_days,
            max_days=MAX_RANGE_DAYS if both else None,
        )
        return Window(days, exact)
