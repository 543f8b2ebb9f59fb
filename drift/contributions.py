"""The drift charts' part of the decision pipeline (audit.registry): the charts advance after
the write's entries are on the chain (drift.processing), and an erased reviewer's drift
records are re-keyed (docs/reference/drift.md, Erasure)."""

from collections.abc import Sequence
from typing import Any

from audit.registry import Change, Contributor, register, register_eraser
from config.jsondoc import JSONObject
from drift.erasure import drift_erase
from drift.processing import points_process
from keys.models import Customer


class DriftContributor(Contributor[None, set[str]]):
    """add() keeps the outcome entries that bring a decision's first outcome (a later outcome
    is not a calibration chart's point); appended() runs the charts."""

    name = "drift"

    def start(self, *, customer: Customer, loaded: None) -> set[str]:
        return set()

    def add(self, acc: set[str], change: Change) -> list[tuple[str, JSONObject]]:
        if change.kind == "outcome" and change.previous_outcome is None:
            acc.add(change.entry_id)
        return []

    def apply(self, *, customer_id: str, acc: set[str], setwise: bool) -> None:
        return None

    def appended(self, *, customer: Customer, acc: set[str], entries: Sequence[Any]) -> None:
        points_process(customer=customer, entries=entries, first_outcomes=acc)


register(DriftContributor())
register_eraser(drift_erase)
