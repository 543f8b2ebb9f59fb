"""The query parameters of GET /v1/oversight/review-effort and /vigilance
(docs/reference/oversight.md) as a FilterSet, read for its values: the figures are grouped in
SQL from them (config.filters.filter_values)."""

import datetime as dt
from typing import TypedDict

from audit.selectors import Narrow
from config.filters import QueryFilterSet, bound_filter, text_filter
from config.timeutils import BOUND_HELP

# OversightFilters' cleaned values (config.filters.filter_values), each None when not given.
OversightValues = TypedDict(
    "OversightValues",  # "from" is a keyword: the functional form
    {"from": dt.datetime | None, "to": dt.datetime | None, "model_id": Narrow, "user_id": Narrow},
)


class OversightFilters(QueryFilterSet):
    ranges = (("from", "to"),)

    from_ = bound_filter(
        end=False, help_text=f"{BOUND_HELP}; the decision's timestamp; default: the window before `to`"
    )
    to = bound_filter(end=True, help_text=f"{BOUND_HELP}; the decision's timestamp; default: now")
    model_id = text_filter(help_text="Only the decisions of this model")
    user_id = text_filter(help_text="Only this reviewer's decisions")
