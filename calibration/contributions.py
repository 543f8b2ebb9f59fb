"""Calibration's part of every decision write: the per-user daily aggregates and
trust.miscalibrated, contributed to the decision pipeline through audit's registry (audit
never imports this app)."""

from django.db import connection
from django.db.models.functions import Collate

from audit.registry import Change, Contributor, Erased, Event, register, register_eraser
from calibration import rules
from calibration.models import RiskUserState, UserDailyAggregate
from calibration.services import AggregateFold, aggregates_fold_apply, decision_day, miscalibrated_event
from calibration.setwise import Staged, staged_apply, staged_copy
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

    def stage(self, *, acc: list[Staged]) -> None:
        if acc:
            staged_copy(acc)

    def apply(self, *, customer_id: str, acc: list[Staged], setwise: bool) -> None:
        if setwise:
            if acc:
                staged_apply(customer_id=customer_id)
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
    set-wise write upserts them (user, model, day), so a concurrent write never deadlocks."""
    if erased.user_id is None:
        return 0
    changed = 0
    key = Collate("model_key", "C") if connection.vendor == "postgresql" else "model_key"
    for model, order in ((UserDailyAggregate, (key, "day")), (RiskUserState, ("pk",))):
        rows = model.objects.filter(customer_id=erased.customer_id, user_id=erased.user_id)
        pks = list(rows.select_for_update().order_by(*order).values_list("pk", flat=True))
        if pks:
            changed += model.objects.filter(pk__in=pks).update(user_id=erased.pseudonym)
    return changed
