"""One attempt of one delivery: the envelope, its signatures, the URL checked again and the POST
(docs/reference/webhooks.md, "Signatures", "URL safety"; docs/reference/events.md, "The envelope").
Transport failures come back as a failed SendResult; anything raised is a bug of ours, counted
by `internal_error_count` and never an attempt."""

import datetime as dt
import json
import os
import threading

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from config.timeutils import isoformat
from webhooks import conf, connections, signing, transport, url_safety
from webhooks.models import Delivery, DispatchCounter, Event, Webhook

API_VERSION = "1.0.0"
INTERNAL_ERRORS = "internal_errors"


# --- one attempt ---------------------------------------------------------------------------------


def envelope(event: Event) -> bytes:
    """The envelope (docs/reference/events.md, "The envelope"), serialised once per attempt;
    these exact bytes are signed."""
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


_host_lock = threading.Lock()
_host_slots: dict[tuple[int, str], threading.BoundedSemaphore] = {}


def _host_semaphore(host: str) -> threading.BoundedSemaphore:
    """Concurrent requests to one destination host, per process (WEBHOOK_MAX_CONNECTIONS_PER_HOST)."""
    key = (os.getpid(), host)
    with _host_lock:
        slot = _host_slots.get(key)
        if slot is None:
            slot = _host_slots[key] = threading.BoundedSemaphore(conf.max_connections_per_host())
        return slot


def send(webhook: Webhook, event: Event, now: dt.datetime) -> transport.SendResult:
    """One attempt: the URL checked again (DNS rebinding), sign, POST to the checked address, over
    the webhook's kept-alive connection when it goes to that same address.
    Transport failures come back as a failed SendResult; anything raised is a bug of ours."""
    keep_alive = conf.keepalive_seconds() > 0
    try:
        target = url_safety.resolve(webhook.url, rules=url_safety.url_rules())
    except url_safety.UnsafeUrl as exc:
        connections.pool().drop(webhook.pk)
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
    }
    if not keep_alive:
        headers["Connection"] = "close"
    with _host_semaphore(target.host):
        return transport.post(
            target,
            body=body,
            headers=headers,
            timeout=conf.timeout_seconds(),
            pool=connections.pool() if keep_alive else None,
            owner=webhook.pk,
        )


def internal_error_count(*, delivery_id: str, token: str | None) -> None:
    """A bug of ours while sending: not an attempt. The delivery is released and due again
    after WEBHOOK_INTERNAL_ERROR_RETRY_SECONDS; the platform counter is visible in /metrics."""
    retry_at = timezone.now() + dt.timedelta(seconds=conf.internal_error_retry_seconds())
    with transaction.atomic():
        rows = Delivery.objects.filter(pk=delivery_id, status=Delivery.Status.PENDING)
        if token is not None:
            rows = rows.filter(claim_token=token)
        rows.update(claimed_until=None, claim_token=None, next_attempt_at=retry_at)
        DispatchCounter.objects.get_or_create(name=INTERNAL_ERRORS)
        DispatchCounter.objects.filter(name=INTERNAL_ERRORS).update(value=F("value") + 1)


def is_timeout(result: transport.SendResult) -> bool:
    return bool(result.error and result.error.startswith("timeout"))
