"""Writes for bias detection and the subgroup statistics store.

SEAM (fixed by the foundation; the bias issue fills in the bodies): audit's decision
services call these inside the same transaction as the decision write, so the
statistics never drift from the decisions.
"""

from typing import Any


def subgroup_stats_on_decision_logged(*, decision: Any) -> None:
    """A new decision was stored (audit.models.Decision). Attach any subgroups posted
    earlier by POST /detect-bias for this decision_id, and count the decision in the
    daily subgroup statistics."""


def subgroup_stats_on_outcome_changed(*, decision: Any, previous_outcome: str | None, previous_category: str) -> None:
    """A late outcome changed a stored decision's outcome (and so possibly its
    calibration_category and correctness). Move its counts from the old state to the new."""
