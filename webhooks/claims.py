"""Claiming due deliveries for one lease (C9), shared out per webhook and per customer;
see webhooks/dispatch.py for the whole design."""

import datetime as dt
import secrets
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from django.db import transaction
from django.db.models import Count, Exists, Min, OuterRef, Q
from django.utils import timezone

from webhooks import conf
from webhooks.events import TEST_EVENT_TYPE
from webhooks.models import Delivery, Webhook


def _unclaimed(now: dt.datetime) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)


class Claim(NamedTuple):
    token: str
    deliveries: list[Delivery]
    # Due rows were left out because an earlier delivery of their webhook was being claimed
    # by someone else at that moment: worth trying again in a few milliseconds.
    held_back: bool = False


def deliveries_claim(
    *, limit: int, webhook_ids: Iterable[str] | None = None, max_webhooks: int | None = None
) -> Claim:
    """Claim due deliveries of enabled webhooks, not backed off and not being sent to by
    anyone else, for one lease: at most WEBHOOK_DISPATCH_PER_WEBHOOK rows per webhook, at most
    `max_webhooks` webhooks, and a customer's webhooks only up to its share.

    PostgreSQL: SELECT ... FOR UPDATE SKIP LOCKED, so concurrent claimers take disjoint rows.
    SQLite: select_for_update is a no-op, but transactions are BEGIN IMMEDIATE (one writer at
    a time), so the conditional UPDATE below is the atomic claim on both.

    Order gate (per webhook, deliveries start in event order): a delivery's first attempt
    is only claimed when no earlier, not-yet-started, unclaimed pending delivery of the same
    webhook is left out of this claim. Retries (attempt_count > 0) are never held back."""
    now = timezone.now()
    token = secrets.token_hex(16)
    lease_until = now + dt.timedelta(seconds=conf.lease_seconds())
    per_webhook = conf.dispatch_per_webhook()
    per_customer = conf.dispatch_per_customer()
    with transaction.atomic():
        busy = Delivery.objects.filter(status=Delivery.Status.PENDING, claimed_until__gt=now).exclude(
            event_type=TEST_EVENT_TYPE
        )
        held: Counter[str] = Counter(
            dict(
                busy.order_by()
                .values("webhook__customer_id")
                .annotate(n=Count("webhook_id", distinct=True))
                .values_list("webhook__customer_id", "n")
            )
        )
        due = Delivery.objects.filter(
            _unclaimed(now),
            Q(webhook__backoff_until__isnull=True) | Q(webhook__backoff_until__lte=now),
            ~Exists(busy.filter(webhook_id=OuterRef("webhook_id"))),
            status=Delivery.Status.PENDING,
            next_attempt_at__lte=now,
            webhook__status=Webhook.Status.ENABLED,
        )
        full = [customer for customer, n in held.items() if n >= per_customer]
        if full:
            due = due.exclude(webhook__customer_id__in=full)
        if webhook_ids is not None:
            due = due.filter(webhook_id__in=list(webhook_ids))
        rows = list(
            due.order_by("next_attempt_at", "created_at", "id")
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("id", "webhook_id", "attempt_count", "created_at", "webhook__customer_id")[:limit]
        )
        if not rows:
            return Claim(token, [])
        kept = []
        taken: Counter[str] = Counter()
        chosen: set[str] = set()
        for row in rows:
            hook, customer = row[1], row[4]
            if hook not in chosen:
                if max_webhooks is not None and len(chosen) >= max_webhooks:
                    continue
                if held[customer] >= per_customer:
                    continue
                chosen.add(hook)
                held[customer] += 1
            if taken[hook] < per_webhook:
                taken[hook] += 1
                kept.append(row)
        ids = [r[0] for r in kept]
        starting = {r[1] for r in kept if r[2] == 0}
        blockers: dict[str, tuple[dt.datetime, str]] = {}
        if starting:
            outside = (
                Delivery.objects.filter(
                    _unclaimed(now), webhook_id__in=starting, status=Delivery.Status.PENDING, attempt_count=0
                )
                .exclude(event_type=TEST_EVENT_TYPE)
                .exclude(id__in=ids)
            )
            firsts = (
                outside.values("webhook_id")
                .annotate(first=Min("created_at"))
                .values_list("webhook_id", "first")
            )
            for hook_id, first in firsts:
                # the same created_at (events in one microsecond) is ordered by id
                first_id = outside.filter(webhook_id=hook_id, created_at=first).aggregate(m=Min("id"))["m"]
                blockers[hook_id] = (first, first_id)
        allowed = [r[0] for r in kept if r[2] > 0 or r[1] not in blockers or (r[3], r[0]) < blockers[r[1]]]
        if not allowed:
            return Claim(token, [], held_back=True)
        Delivery.objects.filter(_unclaimed(now), id__in=allowed, status=Delivery.Status.PENDING).update(
            claimed_until=lease_until, claim_token=token
        )
    claimed = list(
        Delivery.objects.filter(id__in=allowed, claim_token=token)
        .select_related("webhook", "event")
        .order_by("created_at", "id")
    )
    return Claim(token, claimed, held_back=len(allowed) < len(kept))


def claim_release(*, token: str, delivery_ids: list[str]) -> None:
    if delivery_ids:
        Delivery.objects.filter(pk__in=delivery_ids, claim_token=token).update(
            claimed_until=None, claim_token=None
        )
