"""Reads for bias detection and subgroup analysis.

SEAM (fixed by the foundation; the bias issue fills in the body): the fairness app's
amplification analysis reads subgroup statistics only through amplification_counts().
"""

import datetime as dt
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GroupValueCount:
    group: str  # the subgroup value, e.g. "female"
    ai_value: str  # AI recommendation, trimmed and case-folded
    human_value: str  # final human decision, trimmed and case-folded
    count: int


def amplification_counts(
    *, customer: Any, model_id: str, model_version: str | None, attribute: str, since: dt.datetime
) -> list[GroupValueCount]:
    """Counts of the customer's decisions of `model_id` (and, when model_version is given,
    decisions whose model_version is that version or unset) made at or after `since`
    (day granularity: the whole UTC day containing `since` counts), whose subgroups carry
    `attribute` ("gender", "age_group", "ethnicity" or "custom.<key>"), grouped by
    (group, ai_value, human_value). Aggregated in SQL from the daily statistics."""
    return []
