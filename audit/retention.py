"""Changes to a customer's retention policy (docs/reference/erasure.md, Retention):
each change, the legal hold included, appends a `retention_policy_changed` entry to the
customer's chain with the previous and the new values and who changed it (an API key's id or
a staff user), so that lifting a legal hold is evidence like the erasure it allows."""

import datetime as dt

from django.db import transaction
from django.utils import timezone

from audit.apply import entries_append
from audit.models import AuditEntry
from audit.models_erasure import RetentionPolicy
from audit.own_entries import own_entry
from keys.models import Customer

ENTRY_TYPE = AuditEntry.Type.RETENTION_POLICY_CHANGED


def retention_policy_get(*, customer: Customer) -> RetentionPolicy:
    """The customer's policy; the defaults (never changed: `updated_at` None) when it has none."""
    policy = RetentionPolicy.objects.filter(customer=customer).first()
    return policy if policy is not None else RetentionPolicy(customer=customer, updated_at=None)


def policy_values(policy: RetentionPolicy) -> dict[str, int | bool | None]:
    return {"min_days": policy.min_days, "max_days": policy.max_days, "legal_hold": policy.legal_hold}


@transaction.atomic
def retention_policy_set(
    *,
    customer: Customer,
    min_days: int,
    max_days: int | None,
    legal_hold: bool,
    key_id: str | None = None,
    staff_user: str | None = None,
) -> RetentionPolicy:
    """Set every field of the policy. A change appends one `retention_policy_changed` entry
    (the policy row is locked first, the chain head last, as every writer does); the same
    values again change nothing and append nothing. `key_id` or `staff_user`: who asks."""
    RetentionPolicy.objects.get_or_create(customer=customer, defaults={"updated_at": None})
    policy = RetentionPolicy.objects.select_for_update().get(customer=customer)
    previous = policy_values(policy)
    new = {"min_days": min_days, "max_days": max_days, "legal_hold": legal_hold}
    if new == previous:
        return policy
    now = timezone.now()
    policy.min_days, policy.max_days, policy.legal_hold, policy.updated_at = (
        min_days,
        max_days,
        legal_hold,
        now,
    )
    policy.save(update_fields=["min_days", "max_days", "legal_hold", "updated_at"])
    _append(customer, previous=previous, new=new, key_id=key_id, staff_user=staff_user, now=now)
    return policy


def _append(
    customer: Customer,
    *,
    previous: dict[str, int | bool | None],
    new: dict[str, int | bool | None],
    key_id: str | None,
    staff_user: str | None,
    now: dt.datetime,
) -> None:
    entry = own_entry(
        customer_id=customer.pk,
        type=ENTRY_TYPE,
        ref="retention_policy",
        at=now,
        fields={"previous": previous, "policy": new, "key_id": key_id, "staff_user": staff_user},
    )
    entries_append(customer.pk, [entry], decisions=0)
