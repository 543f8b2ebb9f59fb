"""Writes for events and webhooks. Every domain emits events through event_emit().

Delivery design (docs/reference/webhooks.md, "Delivery guarantees"): a delivery is a database row from the moment its event is
recorded (same transaction). On commit, a Celery task is asked to start it "now"; the beat
task `deliveries_dispatch_due` claims whatever is due (first attempts whose message was lost,
retries, rows of a crashed worker) every 2 s. Claiming and sending live in webhooks/dispatch.py."""

import datetime as dt
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from config.db.bulk import bulk_insert, insert_sent
from config.exceptions import RateLimited
from config.jsondoc import JSONObject
from config.ratelimit import SlidingWindow
from config.redis import get_redis
from config.unsaved import unsaved
from keys.models import Customer
from webhooks import attempt, conf, dispatch, selectors, signing, transport
from webhooks.events import EVENT_REGULATIONS, TEST_EVENT_TYPE
from webhooks.exceptions import (
    WebhookAlreadyEnabled,
    WebhookDuplicateUrl,
    WebhookLimitReached,
    WebhookTestInFlight,
)
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook
from webhooks.validation import webhook_events_validate, webhook_url_validate

if TYPE_CHECKING:  # the body module reads this one's event list
    from webhooks.inputs import WebhookUpdateInput

logger = logging.getLogger("trustcal.webhooks")

# --- events and fan-out ------------------------------------------------------------------------


def event_emit(*, customer: Customer, type: str, data: JSONObject) -> Event:
    """Store an event inside the caller's transaction. `data` carries the ids a receiver
    needs; `regulation` is added where docs/reference/events.md ("Event list") names one.

    In the same transaction, one delivery row per webhook of the customer subscribed to the
    type (or `*`): `pending` for an enabled webhook, `skipped` for a disabled one. The first
    attempts are requested once the transaction commits."""
    return events_emit(customer=customer, events=[(type, data)])[0]


def events_emit(*, customer: Customer, events: list[tuple[str, JSONObject]]) -> list[Event]:
    """event_emit for many events of one customer, in order, with no savepoint (a failure rolls
    the caller back, which is what "stored before delivery" needs)."""
    with transaction.atomic(savepoint=False):
        rows, finish = events_emit_sent(customer=customer, events=events)
        finish()
    return rows


def events_emit_sent(
    *, customer: Customer, events: list[tuple[str, JSONObject]]
) -> tuple[list[Event], Callable[[], None]]:
    """events_emit in two steps for a caller in pipeline mode (audit.apply): the events' insert and
    the webhooks read sent now; the function returned reads them and writes the deliveries."""
    rows = []
    for type, data in events:
        if type not in EVENT_REGULATIONS:
            raise ValueError(f"unknown event type {type!r}")
        payload = dict(data)
        if (regulation := EVENT_REGULATIONS[type]) is not None:
            payload.setdefault("regulation", regulation)
        fields = {"customer_id": customer.pk, "type": type, "data": payload}  # unsaved: no
        rows.append(unsaved(Event, fields, {"customer": customer}))  # Model.__init__, dearer than the insert
    if not rows:
        return [], lambda: None
    if connection.vendor == "postgresql":  # one statement of any number: the caller may be in a pipeline
        insert_sent(Event, rows, with_ids=False).keys_read()
    else:
        bulk_insert(Event, rows)
    hooks = selectors.hooks_for_fan_out_sent(customer.pk)

    def finish() -> None:
        if pending := _deliveries_fan_out(rows, hooks()):
            transaction.on_commit(lambda: _deliveries_start_once(pending, customer.pk), robust=True)

    return rows, finish


def events_rekey_user(*, customer: Customer, user_id: str, pseudonym: str) -> int:
    """An erased reviewer (docs/reference/erasure.md): the stored events naming them, and so the
    payloads still awaiting delivery, name the erasure's pseudonym instead."""
    changed = 0
    for event in Event.objects.filter(customer=customer, data__user_id=user_id).iterator():
        event.data = {**event.data, "user_id": pseudonym}
        event.save(update_fields=["data"])
        changed += 1
    return changed


def _deliveries_fan_out(events: list[Event], hooks: list[Webhook]) -> dict[str, str]:
    """The events' delivery rows; returns {delivery id: webhook id} of the pending ones."""
    rows = []
    for event in events:
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
        Delivery.objects.bulk_create(rows, batch_size=500)
    return {row.id: row.webhook_id for row in rows if row.status == Delivery.Status.PENDING}


def _deliveries_start_once(pending: dict[str, str], customer_id: str) -> None:
    """One queued start task per webhook is enough: a start claims every due row of its
    webhooks, so while one is queued (a short-lived cache marker, cleared when the task starts)
    later events of that webhook need no task of their own. A burst of 10,000 events queued
    10,000 tasks before, each running a claim. A lost task costs at most the beat's 2 s.
    The marker must be seen by the worker that clears it: with no shared cache (the embedded
    default's cache is per process) every event queues its start."""
    if not settings.REDIS_URL:
        _deliveries_enqueue(list(pending), sorted(set(pending.values())), customer_id)
        return
    if get_redis() is None:
        return  # Redis (cache and broker) unreachable: the rows wait for beat's claim once it is back
    fresh = {
        hook
        for hook in sorted(set(pending.values()))
        if cache.add(dispatch.start_marker(hook), 1, dispatch.START_MARKER_SECONDS)
    }
    if fresh:
        _deliveries_enqueue(
            [delivery for delivery, hook in pending.items() if hook in fresh], sorted(fresh), customer_id
        )


def _deliveries_enqueue(
    delivery_ids: list[str], webhook_ids: list[str] | None = None, customer_id: str | None = None
) -> None:
    from webhooks.tasks import deliveries_start

    deliveries_start.delay(delivery_ids, webhook_ids, customer_id)


# --- webhooks: create, update, delete, rotate, enable ------------------------------------------


@dataclass(frozen=True)
class IssuedWebhook:
    """A webhook with its secret: exists only in the create and rotate answers."""

    webhook: Webhook
    secret: str


def _customer_lock(customer_id: str) -> None:
    """Serialise a customer's webhook writes (count and duplicate checks): a row lock on
    PostgreSQL; SQLite's IMMEDIATE transactions already allow one writer at a time."""
    Customer.objects.select_for_update().filter(pk=customer_id).exists()


def _url_unique(*, customer_id: str, url: str, exclude_id: str | None = None) -> None:
    same = Webhook.objects.filter(customer_id=customer_id, url=url)
    if exclude_id:
        same = same.exclude(pk=exclude_id)
    if same.exists():
        raise WebhookDuplicateUrl(f"This customer already has a webhook for {url}.")


@transaction.atomic
def webhook_create(
    *, customer: Customer, url: object, events: object, description: str = ""
) -> IssuedWebhook:
    """At most WEBHOOK_MAX_PER_CUSTOMER webhooks per customer (every event fans out to each,
    inside the emitter's transaction), and one per URL."""
    url = webhook_url_validate(url)
    events = webhook_events_validate(events)
    _customer_lock(customer.pk)
    limit = conf.max_per_customer()
    if Webhook.objects.filter(customer=customer).count() >= limit:
        raise WebhookLimitReached(
            f"A customer may have at most {limit} webhooks; delete one or subscribe an existing one to more events."
        )
    _url_unique(customer_id=customer.pk, url=url)
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
def webhook_update(*, webhook: Webhook, changes: "WebhookUpdateInput") -> Webhook:
    """Change the fields the PATCH body sent (`changes.model_fields_set`), a null one included."""
    sent = changes.model_fields_set
    fields = []
    if "url" in sent:
        webhook.url = webhook_url_validate(changes.url)
        _customer_lock(webhook.customer_id)
        _url_unique(customer_id=webhook.customer_id, url=webhook.url, exclude_id=webhook.pk)
        fields.append("url")
    if "events" in sent:
        webhook.events = webhook_events_validate(changes.events)
        fields.append("events")
    if "description" in sent:
        webhook.description = changes.description or ""
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


# --- the test event ----------------------------------------------------------------------------

_test_limiters: dict[int, SlidingWindow] = {}


def _test_limiter() -> SlidingWindow:
    limit = conf.test_per_minute()
    if limit not in _test_limiters:
        _test_limiters[limit] = SlidingWindow("webhook-test", limit=limit, window_seconds=60)
    return _test_limiters[limit]


def webhook_test_start(*, webhook: Webhook) -> Delivery:
    """Record a `webhook.test` event and its delivery, and hand the attempt to a worker: the
    web thread never waits on a receiver. One test in flight per webhook (a pending test
    older than timeout + 60 s was never picked up and is closed as failed), and at most
    WEBHOOK_TEST_PER_MINUTE accepted tests per customer per sliding minute."""
    with transaction.atomic():
        webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
        now = timezone.now()
        stale_before = now - dt.timedelta(seconds=conf.timeout_seconds() + 60)
        in_flight = Delivery.objects.filter(
            webhook=webhook, event_type=TEST_EVENT_TYPE, status=Delivery.Status.PENDING
        )
        in_flight.filter(created_at__lt=stale_before).update(status=Delivery.Status.FAILED, completed_at=now)
        if in_flight.filter(created_at__gte=stale_before).exists():
            raise WebhookTestInFlight(
                f"A test of webhook {webhook.id} is still in progress; see its delivery history."
            )
        decision = _test_limiter().hit(webhook.customer_id)
        if not decision.allowed:
            raise RateLimited(
                f"At most {conf.test_per_minute()} test sends per minute.",
                retry_after=decision.retry_after,
                code="WEBHOOK_TEST_RATE_LIMIT",
            )
        event = Event.objects.create(
            customer_id=webhook.customer_id,
            type=TEST_EVENT_TYPE,
            created_at=now,
            data={"webhook_id": webhook.id, "message": "This is a test event from Trustcal."},
        )
        # next_attempt_at stays empty: the dispatcher never claims a test delivery.
        delivery = Delivery.objects.create(
            webhook=webhook, event=event, event_type=TEST_EVENT_TYPE, created_at=now
        )
    from webhooks.tasks import webhook_test_send

    try:
        webhook_test_send.delay(delivery.pk)
    except KombuOperationalError:
        logger.exception("delivery %s: the test send could not be queued", delivery.pk)
    return delivery


def webhook_test_run(*, delivery_id: str) -> None:
    """The worker's half: one attempt, recorded, never retried; it neither disables nor enables
    the webhook. Running it twice is harmless (the second finds the delivery taken or done)."""
    now = timezone.now()
    token = secrets.token_hex(16)
    lease_until = now + dt.timedelta(seconds=conf.lease_seconds())
    taken = Delivery.objects.filter(
        pk=delivery_id, event_type=TEST_EVENT_TYPE, status=Delivery.Status.PENDING, claim_token__isnull=True
    ).update(claim_token=token, claimed_until=lease_until)
    if not taken:
        return
    delivery = Delivery.objects.select_related("webhook", "event").get(pk=delivery_id)
    try:
        result = attempt.send(delivery.webhook, delivery.event, now)
    except Exception as exc:  # a bug of ours: logged and counted, and the test says so
        logger.exception("delivery %s: internal error during a test send", delivery_id)
        attempt.internal_error_count(delivery_id=delivery_id, token=None)
        result = transport.SendResult(
            ok=False, status=None, duration_ms=0, error=f"internal_error: {type(exc).__name__}", body=""
        )
    with transaction.atomic():
        updated = Delivery.objects.filter(pk=delivery_id, claim_token=token).update(
            status=Delivery.Status.SUCCEEDED if result.ok else Delivery.Status.FAILED,
            attempt_count=1,
            last_response_status=result.status,
            completed_at=timezone.now(),
            next_attempt_at=None,
            claimed_until=None,
            claim_token=None,
        )
        if updated:
            DeliveryAttempt.objects.create(
                delivery_id=delivery_id,
                attempt=1,
                attempted_at=now,
                response_status=result.status,
                duration_ms=result.duration_ms,
                error=(result.error or None) and result.error[:500],
                response_body=result.body[: conf.RESPONSE_BODY_LIMIT],
            )
