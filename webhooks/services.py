"""Writes for events and webhooks. Every domain emits events through event_emit().

Delivery design (contract C9): a delivery is a database row from the moment its event is
recorded (same transaction). On commit, a Celery task is asked to start it "now"; the beat
task `deliveries_dispatch_due` claims whatever is due (first attempts whose message was lost,
retries, rows of a crashed worker) every 2 s. A claim is a lease (`claimed_until`) plus a
random `claim_token`, taken with SELECT ... FOR UPDATE SKIP LOCKED and a conditional UPDATE,
so two workers never hold the same row, and an attempt's outcome is written only while the
token still matches."""

import contextlib
import datetime as dt
import functools
import json
import logging
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Min, Q
from django.utils import timezone

from config.timeutils import isoformat
from keys.models import Customer
from webhooks import conf, signing, transport
from webhooks.events import EVENT_REGULATIONS, EVENT_TYPES, TEST_EVENT_TYPE
from webhooks.exceptions import WebhookAlreadyEnabled, WebhookInvalidEvent, WebhookInvalidUrl
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook

logger = logging.getLogger("trustcal.webhooks")

API_VERSION = "1.0.0"
SUBSCRIBABLE = [*EVENT_TYPES, "*"]


# --- events and fan-out ------------------------------------------------------------------------


def event_emit(*, customer: Customer, type: str, data: dict[str, Any]) -> Event:
    """Store an event inside the caller's transaction. `data` carries the ids a receiver
    needs; `regulation` is added where interface.md's events table names one.

    In the same transaction, one delivery row per webhook of the customer subscribed to the
    type (or `*`): `pending` for an enabled webhook, `skipped` for a disabled one. The first
    attempts are requested once the transaction commits."""
    if type not in EVENT_REGULATIONS:
        raise ValueError(f"unknown event type {type!r}")
    payload = dict(data)
    regulation = EVENT_REGULATIONS[type]
    if regulation is not None:
        payload.setdefault("regulation", regulation)
    # Part of the caller's transaction: no savepoint (two round trips per event saved); a
    # failure here rolls the caller back, which is what "stored before delivery" needs.
    with transaction.atomic(savepoint=False):
        event = Event.objects.create(customer=customer, type=type, data=payload)
        pending_ids = _deliveries_fan_out(event)
        if pending_ids:
            transaction.on_commit(lambda: _deliveries_enqueue(pending_ids), robust=True)
    return event


def _deliveries_fan_out(event: Event) -> list[str]:
    hooks = Webhook.objects.filter(customer_id=event.customer_id).only("id", "status", "events")
    rows = []
    for hook in hooks:
        if not hook.subscribes_to(event.type):
            continue
        row = Delivery(webhook=hook, event=event, event_type=event.type, created_at=event.created_at)
        if hook.status == Webhook.Status.ENABLED:
            row.next_attempt_at = event.created_at
        else:
            row.status, row.completed_at = Delivery.Status.SKIPPED, event.created_at
        rows.append(row)
    if rows:
        Delivery.objects.bulk_create(rows)
    return [row.id for row in rows if row.status == Delivery.Status.PENDING]


def _deliveries_enqueue(delivery_ids: list[str]) -> None:
    from webhooks.tasks import deliveries_start

    deliveries_start.delay(delivery_ids)


# --- webhooks: create, update, delete, rotate, enable ------------------------------------------


def webhook_url_validate(url: Any) -> str:
    """C10 at create/update: https (unless insecure URLs are allowed), and the host must not
    resolve to a loopback, private, link-local, multicast, reserved or unspecified address."""
    if not isinstance(url, str):
        raise WebhookInvalidUrl("url must be a string.")
    try:
        transport.resolve(url.strip(), allow_insecure=conf.allow_insecure_urls())
    except transport.UnsafeUrl as exc:
        raise WebhookInvalidUrl(str(exc))
    return url.strip()


def webhook_events_validate(events: Any) -> list[str]:
    if not isinstance(events, list) or not events:
        raise WebhookInvalidEvent("events must be a non-empty array of event names.")
    unknown = [e for e in events if not isinstance(e, str) or e not in SUBSCRIBABLE]
    if unknown:
        raise WebhookInvalidEvent(
            f"Unknown event name(s): {', '.join(map(str, unknown[:5]))}. Known: {', '.join(SUBSCRIBABLE)}."
        )
    return list(dict.fromkeys(events))


@dataclass(frozen=True)
class IssuedWebhook:
    """A webhook with its secret: exists only in the create and rotate answers."""

    webhook: Webhook
    secret: str


@transaction.atomic
def webhook_create(*, customer: Customer, url: Any, events: Any, description: str = "") -> IssuedWebhook:
    url = webhook_url_validate(url)
    events = webhook_events_validate(events)
    secret = signing.secret_generate()
    now = timezone.now()
    hook = Webhook.objects.create(
        customer=customer,
        url=url,
        events=events,
        description=description or "",
        secret=secret,
        created_at=now,
        updated_at=now,
    )
    return IssuedWebhook(webhook=hook, secret=secret)


@transaction.atomic
def webhook_update(*, webhook: Webhook, **changes: Any) -> Webhook:
    fields = []
    if "url" in changes:
        webhook.url = webhook_url_validate(changes["url"])
        fields.append("url")
    if "events" in changes:
        webhook.events = webhook_events_validate(changes["events"])
        fields.append("events")
    if "description" in changes:
        webhook.description = changes["description"] or ""
        fields.append("description")
    if fields:
        webhook.updated_at = timezone.now()
        webhook.save(update_fields=[*fields, "updated_at"])
    return webhook


def webhook_delete(*, webhook: Webhook) -> None:
    webhook.delete()


@transaction.atomic
def webhook_secret_rotate(*, webhook: Webhook) -> IssuedWebhook:
    """A new secret; the current one keeps signing (second in the header) for 24 h."""
    webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
    now = timezone.now()
    secret = signing.secret_generate()
    webhook.previous_secret = webhook.secret
    webhook.previous_secret_expires_at = now + dt.timedelta(hours=conf.SECRET_GRACE_HOURS)
    webhook.secret = secret
    webhook.updated_at = now
    webhook.save(update_fields=["previous_secret", "previous_secret_expires_at", "secret", "updated_at"])
    return IssuedWebhook(webhook=webhook, secret=secret)


@transaction.atomic
def webhook_enable(*, webhook: Webhook) -> Webhook:
    """Re-enable; deliveries held while it was disabled become due at once."""
    webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
    if webhook.status == Webhook.Status.ENABLED:
        raise WebhookAlreadyEnabled(f"Webhook {webhook.id} is already enabled.")
    now = timezone.now()
    webhook.status = Webhook.Status.ENABLED
    webhook.disabled_reason = None
    webhook.disabled_at = None
    webhook.updated_at = now
    webhook.save(update_fields=["status", "disabled_reason", "disabled_at", "updated_at"])
    held = Delivery.objects.filter(webhook=webhook, status=Delivery.Status.PENDING)
    held.filter(attempt_count__gt=0, next_attempt_at__gt=now).update(next_attempt_at=now)
    first = held.order_by("created_at", "id").values_list("id", flat=True).first()
    if first:
        transaction.on_commit(lambda: _deliveries_enqueue([first]), robust=True)
    return webhook


@transaction.atomic
def webhook_disable(*, webhook_id: str, reason: str) -> bool:
    now = timezone.now()
    return bool(
        Webhook.objects.filter(pk=webhook_id, status=Webhook.Status.ENABLED).update(
            status=Webhook.Status.DISABLED, disabled_reason=reason, disabled_at=now, updated_at=now
        )
    )


@transaction.atomic
def delivery_retry_now(*, delivery: Delivery) -> Delivery:
    """Admin "retry now": the delivery becomes pending and due at once (one more attempt for a
    failed one). A disabled webhook's delivery waits until the webhook is enabled."""
    # An unstarted delivery keeps next_attempt_at == created_at (its place in the webhook's
    # event order, which the claim relies on); a started one is simply due now.
    now = timezone.now()
    delivery.refresh_from_db()
    Delivery.objects.filter(pk=delivery.pk).update(
        status=Delivery.Status.PENDING,
        next_attempt_at=now if delivery.attempt_count else delivery.created_at,
        claimed_until=None,
        claim_token=None,
        completed_at=None,
    )
    transaction.on_commit(lambda: _deliveries_enqueue([delivery.pk]), robust=True)
    delivery.refresh_from_db()
    return delivery


# --- sending -------------------------------------------------------------------------------------


def envelope(event: Event) -> bytes:
    """The body of C9, serialised once per attempt; these exact bytes are signed."""
    body = {
        "id": event.id,
        "type": event.type,
        "created_at": isoformat(event.created_at),
        "api_version": API_VERSION,
        "idempotency_key": event.id,
        "customer_id": event.customer_id,
        "data": event.data,
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def signing_secrets(webhook: Webhook, now: dt.datetime) -> list[str]:
    out = [webhook.secret]
    if (
        webhook.previous_secret
        and webhook.previous_secret_expires_at
        and webhook.previous_secret_expires_at > now
    ):
        out.append(webhook.previous_secret)
    return out


def _send(webhook: Webhook, event: Event, now: dt.datetime) -> transport.SendResult:
    """One attempt: C10 checks again (DNS rebinding), sign, POST to the checked address."""
    try:
        target = transport.resolve(webhook.url, allow_insecure=conf.allow_insecure_urls())
    except transport.UnsafeUrl as exc:
        return transport.SendResult(
            ok=False, status=None, duration_ms=0, error=f"url_refused: {exc}", body=""
        )
    body = envelope(event)
    timestamp = int(now.timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"Trustcal-Webhooks/{settings.SERVICE_VERSION}",
        "webhook-id": event.id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signing.signature_header(
            secrets_in_order=signing_secrets(webhook, now), msg_id=event.id, timestamp=timestamp, body=body
        ),
        "Connection": "close",
    }
    return transport.post(target, body=body, headers=headers, timeout=conf.timeout_seconds())


def _unclaimed(now: dt.datetime) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)


class Claim(NamedTuple):
    token: str
    deliveries: list[Delivery]
    # Due rows were left out because an earlier delivery of their webhook was being claimed
    # by someone else at that moment: worth trying again in a few milliseconds.
    held_back: bool = False


def deliveries_claim(*, limit: int, webhook_ids: Iterable[str] | None = None) -> Claim:
    """Claim up to `limit` due deliveries of enabled webhooks for one lease.

    PostgreSQL: SELECT ... FOR UPDATE SKIP LOCKED, so concurrent claimers take disjoint rows.
    SQLite: select_for_update is a no-op, but transactions are BEGIN IMMEDIATE (one writer at
    a time), so the conditional UPDATE below is the atomic claim on both.

    Order gate (per webhook, deliveries start in event order): a delivery's first attempt
    is only claimed when no earlier, not-yet-started, unclaimed pending delivery of the same
    webhook is left out of this claim. Retries (attempt_count > 0) are never held back."""
    now = timezone.now()
    token = secrets.token_hex(16)
    lease_until = now + dt.timedelta(seconds=conf.lease_seconds())
    with transaction.atomic():
        due = Delivery.objects.filter(
            _unclaimed(now),
            status=Delivery.Status.PENDING,
            next_attempt_at__lte=now,
            webhook__status=Webhook.Status.ENABLED,
        )
        if webhook_ids is not None:
            due = due.filter(webhook_id__in=list(webhook_ids))
        rows = list(
            due.order_by("next_attempt_at", "created_at", "id")
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("id", "webhook_id", "attempt_count", "created_at")[:limit]
        )
        if not rows:
            return Claim(token, [])
        ids = [r[0] for r in rows]
        starting = {r[1] for r in rows if r[2] == 0}
        blockers: dict[str, tuple[dt.datetime, str]] = {}
        if starting:
            outside = Delivery.objects.filter(
                _unclaimed(now), webhook_id__in=starting, status=Delivery.Status.PENDING, attempt_count=0
            ).exclude(id__in=ids)
            firsts = (
                outside.values("webhook_id")
                .annotate(first=Min("created_at"))
                .values_list("webhook_id", "first")
            )
            for hook_id, first in firsts:
                # the same created_at (events in one microsecond) is ordered by id
                first_id = outside.filter(webhook_id=hook_id, created_at=first).aggregate(m=Min("id"))["m"]
                blockers[hook_id] = (first, first_id)
        allowed = [r[0] for r in rows if r[2] > 0 or r[1] not in blockers or (r[3], r[0]) < blockers[r[1]]]
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
    return Claim(token, claimed, held_back=len(allowed) < len(rows))


def delivery_attempt(*, delivery: Delivery, token: str, webhook: Webhook | None = None) -> bool | None:
    """One attempt of a claimed delivery. Returns True/False for success/failure, None when the
    claim was lost (lease expired and taken over) or the webhook is gone or disabled.

    The lease is extended first unless what is left of it (`delivery.claimed_until`, set by
    the claim) still covers a whole attempt; `webhook` may be passed in when freshly read."""
    now = timezone.now()
    lease = dt.timedelta(seconds=conf.lease_seconds())
    margin = dt.timedelta(seconds=conf.timeout_seconds() + 10)
    if delivery.claimed_until is None or delivery.claimed_until - now < min(margin, lease):
        extended = Delivery.objects.filter(
            pk=delivery.pk, claim_token=token, status=Delivery.Status.PENDING
        ).update(claimed_until=now + lease)
        if not extended:
            return None
        delivery.claimed_until = now + lease
    if webhook is None:
        webhook = Webhook.objects.filter(pk=delivery.webhook_id).first()
    if webhook is None:
        return None
    if webhook.status != Webhook.Status.ENABLED:
        Delivery.objects.filter(pk=delivery.pk, claim_token=token).update(
            claimed_until=None, claim_token=None
        )
        return None
    try:
        result = _send(webhook, delivery.event, now)
    except Exception as exc:  # recorded as a failed attempt (and logged), rather than retried forever
        logger.exception("delivery %s: unexpected error while sending", delivery.pk)
        result = transport.SendResult(
            ok=False, status=None, duration_ms=0, error=f"internal_error: {type(exc).__name__}", body=""
        )
    _attempt_record(delivery=delivery, token=token, attempted_at=now, result=result)
    return result.ok


def _attempt_row_create(
    *, delivery_id: str, number: int, attempted_at: dt.datetime, result: transport.SendResult
) -> DeliveryAttempt:
    return DeliveryAttempt.objects.create(
        delivery_id=delivery_id,
        attempt=number,
        attempted_at=attempted_at,
        response_status=result.status,
        duration_ms=result.duration_ms,
        error=(result.error or None) and result.error[:500],
        response_body=result.body[: conf.RESPONSE_BODY_LIMIT],
    )


@transaction.atomic
def _attempt_record(
    *, delivery: Delivery, token: str, attempted_at: dt.datetime, result: transport.SendResult
) -> None:
    """Apply the outcome while the claim is still ours (the UPDATE also locks the row, so the
    attempt row below cannot race a deletion of the webhook)."""
    finished = timezone.now()
    number = delivery.attempt_count + 1
    mine = Delivery.objects.filter(pk=delivery.pk, claim_token=token, status=Delivery.Status.PENDING)
    common = {
        "attempt_count": number,
        "last_response_status": result.status,
        "claimed_until": None,
        "claim_token": None,
    }
    if result.ok:
        updated = mine.update(
            status=Delivery.Status.SUCCEEDED, next_attempt_at=None, completed_at=finished, **common
        )
    elif number >= conf.MAX_ATTEMPTS:
        updated = mine.update(
            status=Delivery.Status.FAILED, next_attempt_at=None, completed_at=finished, **common
        )
        if updated:
            webhook_disable(webhook_id=delivery.webhook_id, reason=conf.DISABLED_REASON_FAILURES)
    else:
        delay = conf.RETRY_DELAYS_SECONDS[number - 1]
        updated = mine.update(next_attempt_at=finished + dt.timedelta(seconds=delay), **common)
    if not updated:
        logger.warning(
            "delivery %s: claim lost or row deleted during attempt %s; outcome dropped", delivery.pk, number
        )
        return
    _attempt_row_create(delivery_id=delivery.pk, number=number, attempted_at=attempted_at, result=result)


WEBHOOK_REFRESH_SECONDS = 1.0
HELD_BACK_RETRIES = 50
HELD_BACK_PAUSE_SECONDS = 0.02


def _send_in_order(token: str, deliveries: list[Delivery], *, in_thread: bool) -> int:
    """One webhook's claimed rows, in event order. The webhook (status, URL, secrets) is read
    again when the copy is over a second old, and the group stops once it is disabled."""
    sent = 0
    webhook: Webhook | None = None
    read_at = 0.0
    if in_thread:
        close_old_connections()  # the pool's threads keep their connection (CONN_MAX_AGE)
    for delivery in deliveries:
        if webhook is None or time.monotonic() - read_at > WEBHOOK_REFRESH_SECONDS:
            webhook = Webhook.objects.filter(pk=delivery.webhook_id).first()
            read_at = time.monotonic()
        if webhook is None:
            break
        outcome = delivery_attempt(delivery=delivery, token=token, webhook=webhook)
        if outcome is not None:
            sent += 1
        if outcome is False and delivery.attempt_count + 1 >= conf.MAX_ATTEMPTS:
            webhook = None  # it may just have been disabled: read it again
        elif webhook.status != Webhook.Status.ENABLED:
            # release the rest of the claim at once, rather than when the lease expires
            Delivery.objects.filter(pk__in=[d.pk for d in deliveries], claim_token=token).update(
                claimed_until=None, claim_token=None
            )
            break
    return sent


_pool: ThreadPoolExecutor | None = None
_pool_pid = 0


def _send_pool() -> ThreadPoolExecutor:
    """One long-lived pool per process (made after a prefork worker forks), so the threads'
    database connections are reused between dispatches instead of opened each time."""
    global _pool, _pool_pid
    if _pool is None or _pool_pid != os.getpid():
        _pool = ThreadPoolExecutor(max_workers=conf.dispatch_threads(), thread_name_prefix="webhook-send")
        _pool_pid = os.getpid()
    return _pool


def send_pool_close() -> None:
    """Close every pool thread's database connection and the pool (tests; worker shutdown)."""
    global _pool
    pool, _pool = _pool, None
    if pool is None:
        return
    size = pool._max_workers
    barrier = threading.Barrier(size)

    def close(_: int) -> None:
        # one call per thread, so each closes its own connection; a thread still sending
        # breaks the barrier, and its connection goes with the process
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=10)
        connection.close()

    list(pool.map(close, range(size)))
    pool.shutdown(wait=True)


def deliveries_dispatch_due(
    *, webhook_ids: Iterable[str] | None = None, limit: int | None = None, budget_seconds: float = 20.0
) -> int:
    """Claim due deliveries (of the given webhooks, or all) and attempt them, until nothing is
    due or the time budget is spent (the beat runs again in 2 s). Each webhook's claimed rows
    are sent in event order; different webhooks in parallel threads, so one slow receiver does
    not hold the others."""
    hooks = list(webhook_ids) if webhook_ids is not None else None
    limit = limit or conf.dispatch_batch_size()
    started = time.monotonic()
    total = 0
    waits = 0
    while True:
        token, claimed, held_back = deliveries_claim(limit=limit, webhook_ids=hooks)
        groups: OrderedDict[str, list[Delivery]] = OrderedDict()
        for delivery in claimed:
            groups.setdefault(delivery.webhook_id, []).append(delivery)
        if conf.dispatch_threads() <= 1 or len(groups) <= 1:
            total += sum(_send_in_order(token, group, in_thread=False) for group in groups.values())
        else:
            send = functools.partial(_send_in_order, token, in_thread=True)
            total += sum(_send_pool().map(send, groups.values()))
        if time.monotonic() - started > budget_seconds:
            break
        if held_back and waits < HELD_BACK_RETRIES:
            # another claimer is committing the earlier rows right now; take the rest after it
            waits += 1
            if not claimed:
                time.sleep(HELD_BACK_PAUSE_SECONDS)
            continue
        if len(claimed) < limit:
            break
    return total


def deliveries_start(*, delivery_ids: Iterable[str]) -> int:
    """Right after commit: start the given deliveries' webhooks (in order, via the claim)."""
    hooks = set(
        Delivery.objects.filter(id__in=list(delivery_ids), status=Delivery.Status.PENDING).values_list(
            "webhook_id", flat=True
        )
    )
    return deliveries_dispatch_due(webhook_ids=sorted(hooks)) if hooks else 0


# --- the test event ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TestResult:
    delivery: Delivery
    event: Event
    success: bool
    response_status: int | None
    duration_ms: int
    error: str | None


def webhook_test_send(*, webhook: Webhook) -> TestResult:
    """One synchronous attempt of a `webhook.test` event; recorded, never retried, and it
    neither disables nor enables the webhook."""
    now = timezone.now()
    with transaction.atomic():
        event = Event.objects.create(
            customer_id=webhook.customer_id,
            type=TEST_EVENT_TYPE,
            created_at=now,
            data={"webhook_id": webhook.id, "message": "This is a test event from Trustcal."},
        )
        delivery = Delivery.objects.create(
            webhook=webhook, event=event, event_type=TEST_EVENT_TYPE, created_at=now
        )
    result = _send(webhook, event, now)
    finished = timezone.now()
    with transaction.atomic():
        _attempt_row_create(delivery_id=delivery.pk, number=1, attempted_at=now, result=result)
        delivery.status = Delivery.Status.SUCCEEDED if result.ok else Delivery.Status.FAILED
        delivery.attempt_count = 1
        delivery.last_response_status = result.status
        delivery.completed_at = finished
        delivery.save(update_fields=["status", "attempt_count", "last_response_status", "completed_at"])
    return TestResult(
        delivery=delivery,
        event=event,
        success=result.ok,
        response_status=result.status,
        duration_ms=result.duration_ms,
        error=result.error,
    )
