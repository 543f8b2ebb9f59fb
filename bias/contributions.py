"""Bias's part of every decision write: the daily subgroup statistics (and the pending
subgroups a decision picks up when it is logged), contributed to the decision pipeline
through audit's registry (audit never imports this app).

load() takes the per-decision lock of every decision the write names (one sorted statement)
and reads their attachments (one round trip for both on PostgreSQL), before the pipeline plans: a POST /detect-bias
racing on the same decision_id either committed before (its attachment is read) or waits
for this write to commit (and then sees the decision). The state each change contributes is
taken when the change is planned, so a batch counts exactly what the same calls one by one
would have counted."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.utils import timezone

from audit.registry import Change, Contributor, Erased, Event, TrailEntry, register, register_eraser
from bias.domain import subgroups_lenient, subgroups_object
from bias.models import BiasAlert, SubgroupAttachment
from bias.setwise import Staged, folded, staged_apply
from bias.stats import (
    attachments_locked,
    attachments_locked_sent,
    counted_attributes,
    decision_state,
    upsert_stats,
)
from keys.models import Customer


@dataclass
class SubgroupFold:
    attachments: dict[str, SubgroupAttachment]
    staged: list[Staged] = field(default_factory=list)  # written set-wise or folded (bias.setwise)
    counted: dict[str, dict[str, str]] = field(default_factory=dict)  # decision_id -> its attributes
    touched: dict[str, SubgroupAttachment] = field(default_factory=dict)
    adopted: dict[str, dict[str, str]] = field(
        default_factory=dict
    )  # decision_id -> waiting subgroups it took


class BiasContributor(Contributor[dict[str, SubgroupAttachment], SubgroupFold]):
    name = "bias"

    def load(self, *, customer_id: str, decision_ids: Sequence[str]) -> dict[str, SubgroupAttachment]:
        return attachments_locked(customer_id, list(decision_ids))

    def load_sent(
        self, *, customer_id: str, decision_ids: Sequence[str]
    ) -> Callable[[], dict[str, SubgroupAttachment] | None]:
        if not decision_ids:
            return lambda: {}
        return attachments_locked_sent(customer_id, list(decision_ids))

    def start(self, *, customer: Customer, loaded: dict[str, SubgroupAttachment] | None) -> SubgroupFold:
        return SubgroupFold(attachments=dict(loaded or {}))

    def add(self, acc: SubgroupFold, change: Change) -> list[Event]:
        decision = change.decision
        attachment = acc.attachments.get(decision.decision_id)
        state = decision_state(decision)
        if change.kind == "new":
            # Subgroups carried by the decision itself are the later attachment and replace
            # pending ones posted earlier through POST /detect-bias.
            attributes = subgroups_lenient(decision.subgroups)
            if attachment is not None:
                if not attributes and attachment.attributes:
                    acc.adopted[decision.decision_id] = attachment.attributes
                attributes = attributes or attachment.attributes
                attachment.attributes, attachment.counted = attributes, True
                acc.touched[decision.decision_id] = attachment
            acc.counted[decision.decision_id] = attributes
            if attributes:
                acc.staged.append(Staged(state, attributes, +1))
            return []
        if decision.decision_id not in acc.counted:
            acc.counted[decision.decision_id] = counted_attributes(decision, attachment)
        attributes = acc.counted[decision.decision_id]
        old = decision_state(decision, outcome=change.previous_outcome, category=change.previous_category)
        if attributes and old != state:
            acc.staged.append(Staged(old, attributes, -1))
            acc.staged.append(Staged(state, attributes, +1))
        return []

    def trail(self, acc: SubgroupFold, change: Change) -> list[TrailEntry]:
        """A decision logged without subgroups of its own that takes the ones POST /detect-bias
        left waiting: the trail records them, right after the decision's entry, as any later
        attachment is recorded (docs/reference/bias.md, Subgroups)."""
        adopted = acc.adopted.pop(change.decision.decision_id, None) if change.kind == "new" else None
        if not adopted:
            return []
        return [TrailEntry("subgroups_attached", {"subgroups": subgroups_object(adopted)})]

    def apply(self, *, customer_id: str, acc: SubgroupFold, setwise: bool) -> None:
        if setwise:
            if acc.staged:
                staged_apply(customer_id=customer_id, changes=acc.staged)
        else:
            upsert_stats(customer_id, folded(acc.staged))
        if acc.touched:
            now = timezone.now()
            touched = list(acc.touched.values())
            for attachment in touched:
                attachment.updated_at = now
            SubgroupAttachment.objects.bulk_update(
                touched, ["attributes", "counted", "updated_at"], batch_size=500
            )


register(BiasContributor())


@register_eraser
def delete_erased_subjects_attachments(erased: Erased) -> int:
    """The subgroups POST /detect-bias attached to an erased subject's decisions are that
    person's data (docs/reference/erasure.md): their rows go. The statistics keep their counts
    (by group, not by person)."""
    ids = erased.subject_decisions
    changed = 0
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        changed += SubgroupAttachment.objects.filter(
            customer_id=erased.customer_id, decision_id__in=chunk
        ).delete()[0]
        # The feed's alerts raised on those decisions no longer name them: beside a finding on a
        # group of one, the decision id tells that decision's attributes.
        changed += BiasAlert.objects.filter(customer_id=erased.customer_id, decision_id__in=chunk).update(
            decision_id=None
        )
    return changed
