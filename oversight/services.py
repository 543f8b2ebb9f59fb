"""The periodic review-effort check: a reviewer who becomes flagged fires
oversight.rubber_stamp, at most once per reviewer per 24 hours (docs/reference/oversight.md)."""

import datetime as dt
import logging

from django.db import transaction
from django.utils import timezone

from audit import platform as audit_platform
from keys.models import Customer
from oversight import rules, selectors
from oversight.models import RubberStampState
from webhooks.services import event_emit

logger = logging.getLogger("trustcal.oversight")


def rubber_stamp_check(*, customer: Customer, now: dt.datetime | None = None) -> int:
    """Compare the customer's flagged reviewers (the last 30 days) with the recorded state:
    fire for each reviewer who became flagged unless they fired in the last 24 hours, clear
    those who no longer are. Returns the number of events fired. Safe to run twice: the state
    rows are locked and the second run sees them flagged."""
    now = now or timezone.now()
    effort = selectors.review_effort(
        customer, since=now - dt.timedelta(days=rules.REVIEW_WINDOW_DAYS), until=now
    )
    flagged = {user["user_id"]: user for user in effort.users if user["flagged"]}
    fired = 0
    with transaction.atomic():
        known = {
            state.user_id: state
            for state in RubberStampState.objects.select_for_update()
            .filter(customer=customer)
            .order_by("user_id")
        }
        new = [
            RubberStampState(customer=customer, user_id=user_id)
            for user_id in sorted(flagged)
            if user_id not in known
        ]
        if new:
            RubberStampState.objects.bulk_create(new, ignore_conflicts=True)
            for state in RubberStampState.objects.select_for_update().filter(
                customer=customer, user_id__in=[s.user_id for s in new]
            ):
                known[state.user_id] = state
        repeat = dt.timedelta(hours=rules.RUBBER_STAMP_REPEAT_HOURS)
        for user_id, state in sorted(known.items()):
            row = flagged.get(user_id)
            if row is None:
                if state.flagged:
                    state.flagged, state.updated_at = False, now
                    state.save(update_fields=["flagged", "updated_at"])
                continue
            becomes = not state.flagged
            state.flagged = True
            state.quick_agreement_rate = row["quick_agreement_rate"]
            state.updated_at = now
            if becomes and (state.last_fired_at is None or now - state.last_fired_at >= repeat):
                state.last_fired_at = now
                fired += 1
                event_emit(
                    customer=customer,
                    type="oversight.rubber_stamp",
                    data={
                        "user_id": user_id,
                        "quick_agreement_rate": row["quick_agreement_rate"],
                        "timed_decisions": row["timed_decisions"],
                        "window_days": rules.REVIEW_WINDOW_DAYS,
                    },
                )
            state.save(update_fields=["flagged", "quick_agreement_rate", "updated_at", "last_fired_at"])
    return fired


def rubber_stamp_check_all(*, now: dt.datetime | None = None) -> dict[str, int]:
    """Every customer with a decision logged in the last 30 days."""
    now = now or timezone.now()
    checked = fired = 0
    since = now - dt.timedelta(days=rules.REVIEW_WINDOW_DAYS)
    for customer in Customer.objects.filter(pk__in=audit_platform.platform_customers_active_since(since)):
        checked += 1
        try:
            fired += rubber_stamp_check(customer=customer, now=now)
        except Exception:  # one customer's failure must not stop the others' checks
            logger.exception("rubber-stamp check of customer %s failed", customer.pk)
    return {"checked": checked, "fired": fired}
