"""Calibration's part of every decision write: the per-user daily aggregates and
trust.miscalibrated, contributed to the decision pipeline through audit's registry (audit
never imports this app)."""

from django.db import connection
from django.db.models.functions import Collate

from audit.registry import Change, Contributor, Erased, Event, register, register_eraser
from calibration import rules
from calibration.models import RiskUserState, UserDailyAggregate
from calibration.services import AggregateFold, aggregates_fold_apply, decision_day, miscalibrated_event
from calibration.setwise import Staged, staged_apply
from keys.models import Customer


class CalibrationContributor(Contributor[None, list[Staged]]):
    """Each change is staged as the records it adds and takes away, as the change leaves the
    decision; apply() writes them set-wise or folds them (calibration.setwise)."""

    name = "calibration"

    def start(self, *, customer: Customer, loaded: None) -> list[Staged]:
        return []

    def add(self, acc: list[Staged], change: Change) -> list[Event]:
        decision = change.decision
        record = rules.record_of(decision)
        if change.kind == "new":
            previous = None
            fires = decision.calibration_category in rules.MISCALIBRATED
        else:
            previous = rules.record_of(
                decision, outcome=change.previous_outcome, category=change.previous_category
            )
            fires = (
                decision.calibration_category in rules.MISCALIBRATED
                and decision.calibration_category != change.previous_category
            )
        acc.append(Staged(decision.user_id, decision.model_id, decision_day(decision), record, previous))
        if fires:
            return [miscalibrated_event(decision=decision, entry_id=change.entry_id, source=change.source)]
        return []

    def apply(self, *, customer_id: str, acc: list[Staged], setwise: bool) -> None:
        if setwise:
            if acc:
                staged_apply(customer_id=customer_id, changes=acc)
            return
        fold = AggregateFold()
        for change in acc:
            fold.add(user_id=change.user_id, model_id=change.model_id, day=change.day, delta=change.delta())
        aggregates_fold_apply(customer_id=customer_id, fold=fold)


register(CalibrationContributor())


@register_eraser
def rekey_erased_user(erased: Erased) -> int:
    """An erased reviewer's daily aggregates and risk state keep their figures under the
    erasure's pseudonym (docs/reference/erasure.md). The rows are locked first in the order the
    set-wise write upserts them (user, model, day), so a concurrent write never deadlocks. An
    erasure runs in parts, and decisions logged for the reviewer meanwhile write rows under the
    name again: a row whose key the pseudonym already holds is added into that row (its week
    follows, calibration.weekly) and deleted, and of two risk states the later one is kept."""
    if erased.user_id is None:
        return 0
    key = Collate("model_key", "C") if connection.vendor == "postgresql" else "model_key"
    return _days_rekeyed(erased, order=(key, "day")) + _risk_state_rekeyed(erased)


def _days_rekeyed(erased: Erased, *, order: tuple[Collate | str, str]) -> int:
    rows = UserDailyAggregate.objects.filter(customer_id=erased.customer_id, user_id=erased.user_id)
    named = list(rows.select_for_update().order_by(*order))
    if not named:
        return 0
    held = UserDailyAggregate.objects.filter(customer_id=erased.customer_id, user_id=erased.pseudonym)
    into = {(row.model_key, row.day): row for row in held.select_for_update().order_by(*order)}
    moved = [row.pk for row in named if (row.model_key, row.day) not in into]
    UserDailyAggregate.objects.filter(pk__in=moved).update(user_id=erased.pseudonym)
    for row in named:
        target = into.get((row.model_key, row.day))
        if target is not None:
            for name in rules.SUM_FIELDS:
                setattr(target, name, getattr(target, name) + getattr(row, name))
            target.save(update_fields=list(rules.SUM_FIELDS))
            row.delete()
    return len(named)


def _risk_state_rekeyed(erased: Erased) -> int:
    states = RiskUserState.objects.filter(
        customer_id=erased.customer_id, user_id__in=[erased.user_id, erased.pseudonym]
    )
    found = list(states.select_for_update().order_by("pk"))
    named = [state for state in found if state.user_id == erased.user_id]
    if not named:
        return 0
    if len(found) == 2:  # the pseudonym's from an earlier part: the later one stays
        earlier, later = sorted(found, key=lambda state: (state.updated_at, state.pk))
        earlier.delete()
        if later.user_id == erased.pseudonym:
            return 1
    RiskUserState.objects.filter(pk=named[0].pk).update(user_id=erased.pseudonym)
    return 1
