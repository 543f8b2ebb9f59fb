"""A `previous` baseline: the N eligible points with the highest sequences before the monitor's
creation entry (docs/reference/drift.md, Baseline and follow model)."""

import datetime as dt
from collections import deque

from audit.selectors import point_entries
from drift.models import DriftMonitor
from drift.processing import eligible_event

Previous = tuple[float | None, int, int, tuple[str, str | None, dt.datetime]]


def previous_points(monitor: DriftMonitor, size: int) -> list[Previous]:
    """(c, e, sequence, (decision_id, user_id, timestamp)) of the last `size` eligible points."""
    kept: deque[Previous] = deque(maxlen=size)
    outcome_known: set[str] = set()
    entries = point_entries(
        monitor.customer_id,
        user_id=monitor.user_id if monitor.scope == "user" else None,
        model_id=monitor.model_id,
        model_version=monitor.model_version,
    )
    for entry in entries:
        first = False
        if entry.outcome is not None and entry.decision_ref not in outcome_known:
            outcome_known.add(entry.decision_ref)
            first = True
        e = eligible_event(monitor, entry, first_outcome=first)
        if e is not None:
            kept.append(
                (entry.ai_confidence, e, entry.sequence, (entry.decision_ref, entry.user_id, entry.timestamp))
            )
    return list(kept)
