"""Claiming due deliveries (docs/reference/webhooks.md, "Claims and fencing", "Order" and
"Fairness"); webhooks/dispatch.py explains the whole design.

Two steps. `webhooks_pick` chooses which webhooks to start: due rows in due order, of
enabled webhooks that are not backed off and that nobody is sending to, a customer's webhooks
only up to its share. `webhook_claim` then takes the next due rows of ONE webhook for a holder,
in one `UPDATE ... RETURNING` statement that also checks the order gate and that no other
holder has rows of that webhook; a holder calls it again while it is still sending (one claim
ahead), so no claim sits between two of its sends."""

import contextlib
import datetime as dt
import json
import secrets
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from webhooks import conf
from webhooks.events import TEST_EVENT_TYPE
from webhooks.models import Delivery, Event, Webhook


@contextlib.contextmanager
def bookkeeping(*, lock: str | None = None) -> Iterator[None]:
    """A transaction of the dispatcher's own bookkeeping (claims, outcomes). On PostgreSQL it
    commits without waiting for the write-ahead log to reach the disk: a database crash can
    lose the last fraction of a second of such commits, which only means those deliveries are
    claimed and sent again (at least once; docs/reference/webhooks.md, "Delivery guarantees").
    Deliveries themselves are written with their events, durably. With `lock`, the
    transaction first takes that advisory lock (PostgreSQL; in the same round trip)."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                if lock is None:
                    cursor.execute("SELECT set_config('synchronous_commit', 'off', true)")
                else:
                    cursor.execute(
                        "SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock(hashtext(%s))",
                        [lock],
                    )
        yield


def _unclaimed(now: dt.datetime) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)


class Claim(NamedTuple):
    token: str
    deliveries: list[Delivery]
    # Due rows were left out because an earlier delivery of their webhook was being claimed
    # by someone else at that moment (or was held back): worth trying again shortly.
    held_back: bool = False


def claim_token() -> str:
    return secrets.token_hex(16)


def webhooks_pick(
    *,
    limit: int,
    webhook_ids: Iterable[str] | None = None,
    max_webhooks: int | None = None,
    holding: dict[str, str] | None = None,
    skip: Iterable[str] = (),
    customer_id: str | None = None,
) -> list[tuple[str, str]]:
    """Webhooks to start sending to, oldest due row first: due rows (at most `limit` read) of
    enabled webhooks, not backed off, with no claimed row (one holder per webhook), not in
    `skip` (and of `customer_id` alone when given); at most `max_webhooks`, and a customer's only while fewer than
    WEBHOOK_DISPATCH_PER_CUSTOMER of its webhooks are being sent to (counting `holding`,
    {webhook id: customer id} of holders started here that may not have claimed yet)."""
    now = timezone.now()
    per_customer = conf.dispatch_per_customer()
    busy = Delivery.objects.filter(status=Delivery.Status.PENDING, claimed_until__gt=now).exclude(
        event_type=TEST_EVENT_TYPE
    )
    held_pairs = set(busy.order_by().values_list("webhook__customer_id", "webhook_id").distinct())
    held_pairs.update((customer, hook) for hook, customer in (holding or {}).items())
    held: Counter[str] = Counter(customer for customer, _ in held_pairs)
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
    if customer_id is not None:
        due = due.filter(webhook__customer_id=customer_id)
    excluded = set(skip) | set(holding or {})
    if excluded:
        due = due.exclude(webhook_id__in=sorted(excluded))
    rows = due.order_by("next_attempt_at", "created_at", "id").values_list(
        "webhook_id", "webhook__customer_id"
    )[:limit]
    chosen: dict[str, str] = {}
    for hook, customer in rows:
        if hook in chosen or held[customer] >= per_customer:
            continue
        if max_webhooks is not None and len(chosen) >= max_webhooks:
            break
        chosen[hook] = customer
        held[customer] += 1
    return list(chosen.items())


# One statement: the next due rows of one webhook, locked (PostgreSQL: SKIP LOCKED, so
# concurrent claimers take disjoint rows; SQLite: every write transaction is BEGIN IMMEDIATE,
# one writer at a time), kept only where
# - the webhook is enabled and not backed off, no other holder has a claimed row of it, and
#   fewer than WEBHOOK_DISPATCH_PER_CUSTOMER other webhooks of its customer are being sent to
#   (on PostgreSQL a lock per customer, taken just before, makes that count exact across
#   workers);
# - a first attempt has no earlier, unstarted, unclaimed pending delivery of its webhook left
#   out of this claim (the order gate; rows locked by a concurrent claimer count as left out,
#   so a claim racing another one takes nothing rather than rows after the other's);
# and returned with what sending needs of their events.
_CLAIM_SQL = """
WITH cand AS (
    SELECT id, created_at, attempt_count FROM webhooks_delivery
    WHERE webhook_id = %(webhook)s AND status = 'pending' AND next_attempt_at <= %(now)s
      AND (claimed_until IS NULL OR claimed_until <= %(now)s)
    ORDER BY next_attempt_at, created_at, id
    LIMIT %(limit)s{lock}
), blocker AS MATERIALIZED (
    SELECT created_at, id FROM webhooks_delivery
    WHERE webhook_id = %(webhook)s AND status = 'pending' AND attempt_count = 0
      AND event_type <> %(test_type)s
      AND (claimed_until IS NULL OR claimed_until <= %(now)s)
      AND id NOT IN (SELECT id FROM cand)
    ORDER BY created_at, id
    LIMIT 1
)
UPDATE webhooks_delivery SET claimed_until = %(until)s, claim_token = %(token)s
WHERE id IN (
    SELECT c.id FROM cand c
    WHERE c.attempt_count > 0 OR NOT EXISTS (
        SELECT 1 FROM blocker b
        WHERE b.created_at < c.created_at OR (b.created_at = c.created_at AND b.id < c.id)
    )
)
AND EXISTS (
    SELECT 1 FROM webhooks_webhook w
    WHERE w.id = %(webhook)s AND w.status = 'enabled'
      AND (w.backoff_until IS NULL OR w.backoff_until <= %(now)s)
)
AND NOT EXISTS (
    SELECT 1 FROM webhooks_delivery o
    WHERE o.webhook_id = %(webhook)s AND o.status = 'pending' AND o.claimed_until > %(now)s
      AND o.claim_token <> %(token)s AND o.event_type <> %(test_type)s
)
AND (
    SELECT COUNT(DISTINCT s.webhook_id) FROM webhooks_delivery s
    JOIN webhooks_webhook sw ON sw.id = s.webhook_id
    WHERE sw.customer_id = %(customer)s AND s.webhook_id <> %(webhook)s AND s.status = 'pending'
      AND s.claimed_until > %(now)s AND s.event_type <> %(test_type)s
) < %(share)s
RETURNING id, event_id, event_type, attempt_count, created_at, claimed_until,
    (SELECT e.data FROM webhooks_event e WHERE e.id = webhooks_delivery.event_id),
    (SELECT e.created_at FROM webhooks_event e WHERE e.id = webhooks_delivery.event_id),
    (SELECT e.customer_id FROM webhooks_event e WHERE e.id = webhooks_delivery.event_id)
"""


def _datetime(value: object) -> dt.datetime:
    """A timestamp as the backend returns it from raw SQL (SQLite: ISO text, in UTC)."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    parsed = parse_datetime(str(value))
    if parsed is None:
        raise ValueError(f"not a timestamp: {value!r}")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _db_value(value: dt.datetime) -> str | None:
    return connection.ops.adapt_datetimefield_value(value)


def webhook_claim(*, webhook_id: str, customer_id: str, token: str, limit: int) -> list[Delivery]:
    """Claim up to `limit` due rows of one webhook of `customer_id` for the holder `token`
    (one statement, see above); returned in event order, the order they are sent in."""
    now = timezone.now()
    until = now + dt.timedelta(seconds=conf.lease_seconds())
    lock = "\n    FOR UPDATE SKIP LOCKED" if connection.features.has_select_for_update_skip_locked else ""
    params = {
        "webhook": webhook_id,
        "now": _db_value(now),
        "until": _db_value(until),
        "token": token,
        "limit": limit,
        "test_type": TEST_EVENT_TYPE,
        "customer": customer_id,
        "share": conf.dispatch_per_customer(),
    }
    # Claims of one customer's webhooks one at a time, each statement with a snapshot taken
    # after the previous claim committed (SQLite: one writer at a time anyway).
    with bookkeeping(lock=f"trustcal-webhooks:{customer_id}"), connection.cursor() as cursor:
        cursor.execute(_CLAIM_SQL.format(lock=lock), params)
        rows = cursor.fetchall()
    claimed = []
    for pk, event_id, event_type, attempts, created_at, claimed_until, data, event_at, customer_id in rows:
        event = Event(
            id=event_id,
            type=event_type,
            data=json.loads(data) if isinstance(data, str | bytes) else data,
            created_at=_datetime(event_at),
            customer_id=customer_id,
        )
        delivery = Delivery(
            id=pk,
            webhook_id=webhook_id,
            event=event,
            event_type=event_type,
            attempt_count=attempts,
            created_at=_datetime(created_at),
            claimed_until=_datetime(claimed_until),
            claim_token=token,
        )
        delivery._state.adding = False
        event._state.adding = False
        claimed.append(delivery)
    claimed.sort(key=lambda d: (d.created_at, d.pk))
    return claimed


def deliveries_claim(
    *, limit: int, webhook_ids: Iterable[str] | None = None, max_webhooks: int | None = None
) -> Claim:
    """Pick webhooks and claim their due rows under one token: at most
    WEBHOOK_DISPATCH_PER_WEBHOOK rows per webhook and `limit` rows in all (for callers that
    send a claim themselves, e.g. the tests; the dispatcher's holders claim per webhook)."""
    token = claim_token()
    claimed: list[Delivery] = []
    held_back = False
    per_webhook = conf.dispatch_per_webhook()
    for hook, customer in webhooks_pick(limit=limit, webhook_ids=webhook_ids, max_webhooks=max_webhooks):
        if len(claimed) >= limit:
            break
        rows = webhook_claim(
            webhook_id=hook, customer_id=customer, token=token, limit=min(per_webhook, limit - len(claimed))
        )
        held_back = held_back or not rows
        claimed.extend(rows)
    return Claim(token, claimed, held_back=held_back)


def claim_release(*, token: str, delivery_ids: list[str] | None = None) -> None:
    """Give claimed rows back (all of the holder's unsent rows when `delivery_ids` is None)."""
    rows = Delivery.objects.filter(claim_token=token, status=Delivery.Status.PENDING)
    if delivery_ids is not None:
        if not delivery_ids:
            return
        rows = rows.filter(pk__in=delivery_ids)
    rows.update(claimed_until=None, claim_token=None)
