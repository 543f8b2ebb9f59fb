"""Calibration's part of every decision write: the per-user daily aggregates and
trust.miscalibrated, contributed to the decision pipeline through audit's registry (audit
never imports this app)."""

from typing import Any

from audit.registry import Change, Contributor, Erased, Event, register, register_eraser
from calibration import rules
from calibration.models import RiskUserState, UserDailyAggregate
from calibration.services import AggregateFold, aggregates_fold_apply, decision_day, miscalibrated_event


class CalibrationContributor(Contributor):
    name = "calibration"

    def start(self, *, customer: Any, loaded: Any) -> AggregateFold:
        return AggregateFold()

    def add(self, acc: AggregateFold, change: Change) -> list[Event]:
        decision = change.decision
        new = rules.contribution(rules.record_of(decision))
        if change.kind == "new":
            delta = new
            fires = decision.calibration_category in rules.MISCALIBRATED
        else:
            old = rules.contribution(
                rules.record_of(decision, outcome=change.previous_outcome, category=change.previous_category)
            )
            delta = rules.delta(new, old)
            fires = (
                decision.calibration_category in rules.MISCALIBRATED
                and decision.calibration_category != change.previous_category
            )
        acc.add(user_id=decision.user_id, model_id=decision.model_id, day=decision_day(decision), delta=delta)
        if fires:
            return [miscalibrated_event(decision=decision, entry_id=change.entry_id, source=change.source)]
        return []

    def apply(self, *, customer_id: str, acc: AggregateFold) -> None:
        aggregates_fold_apply(customer_id=customer_id, fold=acc)


register(CalibrationContributor())


@register_eraser
def rekey_erased_user(erased: Erased) -> None:
    """An erased reviewer's daily aggregates and risk state keep their figures under the
    erasure's pseudonym (docs/reference/erasure.md)."""
    if erased.user_id is None:
        return
    for model in (UserDailyAggregate, RiskUserState):
        model.objects.filter(customer_id=erased.customer_id, user_id=erased.user_id).update(
            user_id=erased.pseudonym
        )
