"""The delivery dispatcher (C9): claims due delivery rows fairly, sends them, records outcomes
in bulk. docs/architecture.md ("Webhook dispatcher") explains the design; in short:

- Durable rows: a delivery is a row from the moment its event is recorded. A claim is a lease
  (`claimed_until`) plus a random `claim_token` set on the rows, taken with SELECT ... FOR UPDATE
  SKIP LOCKED and a conditional UPDATE; outcomes are written only where the token still
  matches, so a worker whose lease ran out (or that was killed) cannot overwrite a newer claim.
- One holder per webhook: a webhook with claimed rows is skipped by every other claim, so its
  deliveries start in event order and a slow receiver occupies one sender, never more.
- Shares: one claim statement takes up to WEBHOOK_DISPATCH_PER_WEBHOOK rows of each webhook and
  new webhooks of a customer only while fewer than WEBHOOK_DISPATCH_PER_CUSTOMER of its webhooks
  are being sent to; each webhook's rows go to their own sender thread.
- Back-off: a timeout releases the rest of that webhook's claim and pauses that webhook alone
  (doubling per consecutive timeout, capped); other webhooks are not affected.
- Bulk bookkeeping: outcomes are buffered and written a few at a time (one locking SELECT, one
  UPDATE, one INSERT) by a writer thread while the sender goes on; a killed worker re-sends at
  most its unwritten outcomes (at least once). Connections are kept alive per webhook.
- Only transport failures count as attempts; a bug of ours while sending is logged with its
  traceback, leaves the delivery pending for a later retry and counts in /metrics."""

import contextlib
import datetime as dt
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections, connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from config.timeutils import isoformat
from webhooks import conf, connections, signing, transport
from webhooks.claims import Claim, claim_release, deliveries_claim
from webhooks.events import TEST_EVENT_TYPE
from webhooks.models import Delivery, DispatchCounter, Event, Webhook
from webhooks.outcomes import Outcomes, back_off, recovered

logger = logging.getLogger("trustcal.webhooks")

API_VERSION = "1.0.0"
INTERNAL_ERRORS = "internal_errors"


# --- one attempt ---------------------------------------------------------------------------------


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
    """One attempt: C10 checks again (DNS rebinding), sign, POST to the checked address, over
    the webhook's kept-alive connection when it goes to that same address.
    Transport failures come back as a failed SendResult; anything raised is a bug of ours."""
    keep_alive = conf.keepalive_seconds() > 0
    try:
        target = transport.resolve(webhook.url, allow_insecure=conf.allow_insecure_urls())
    except transport.UnsafeUrl as exc:
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


def _is_timeout(result: transport.SendResult) -> bool:
    return bool(result.error and result.error.startswith("timeout"))


def delivery_attempt(*, delivery: Delivery, token: str, webhook: Webhook | None = None) -> bool | None:
    """One attempt of a claimed delivery, its outcome written at once. True/False for
    success/failure, None when the claim was lost or the webhook is gone or disabled."""
    sent = _send_group(token, [delivery], in_thread=False, webhook=webhook)
    if not sent:
        return None
    return next(iter(sent.values()))


WEBHOOK_REFRESH_SECONDS = 1.0


def _send_group(
    token: str, deliveries: list[Delivery], *, in_thread: bool, webhook: Webhook | None = None
) -> dict[str, bool]:
    """One webhook's claimed rows, in event order, by one sender. The webhook (status, URL,
    secrets) is read again when the copy is over a second old; the lease is extended while
    the group runs; a timeout or a disabled webhook releases the rest of the claim at once."""
    if in_thread:
        close_old_connections()  # the pool's threads keep their connection (CONN_MAX_AGE)
    # In a sender thread, routine outcome writes go to a writer thread while sending goes on;
    # in the caller's thread (tests, one sender) they stay on the caller's own connection.
    outcomes = Outcomes(token, writer=_writer_pool() if in_thread else None)
    done: dict[str, bool] = {}
    lease = dt.timedelta(seconds=conf.lease_seconds())
    margin = dt.timedelta(seconds=conf.timeout_seconds() + 10)
    lease_until = min((d.claimed_until for d in deliveries if d.claimed_until), default=None)
    read_at = time.monotonic() if webhook is not None else 0.0
    try:
        for index, delivery in enumerate(deliveries):
            rest = [d.pk for d in deliveries[index:]]
            if webhook is None or time.monotonic() - read_at > WEBHOOK_REFRESH_SECONDS:
                webhook = Webhook.objects.filter(pk=delivery.webhook_id).first()
                read_at = time.monotonic()
            if webhook is None:
                break
            if webhook.status != Webhook.Status.ENABLED:
                done.update(outcomes.flush())
                claim_release(token=token, delivery_ids=rest)
                break
            now = timezone.now()
            if lease_until is None or lease_until - now < min(margin, lease):
                extended = Delivery.objects.filter(
                    pk__in=rest, claim_token=token, status=Delivery.Status.PENDING
                ).update(claimed_until=now + lease)
                if extended < len(rest):
                    break  # part of the claim was taken over: stop rather than send out of order
                lease_until = now + lease
            try:
                result = send(webhook, delivery.event, now)
            except Exception:
                logger.exception(
                    "delivery %s: internal error while sending (not counted as an attempt)", delivery.pk
                )
                done.update(outcomes.flush())
                internal_error_count(delivery_id=delivery.pk, token=token)
                claim_release(token=token, delivery_ids=rest[1:])
                break
            outcomes.add(delivery, now, result)
            if _is_timeout(result):
                done.update(outcomes.flush())
                back_off(webhook)
                claim_release(token=token, delivery_ids=rest[1:])
                break
            if result.ok:
                recovered(webhook)
            if not result.ok and delivery.attempt_count + 1 >= conf.MAX_ATTEMPTS:
                done.update(outcomes.flush())
                webhook = None  # it may just have been disabled: read it again
            elif outcomes.due():
                done.update(outcomes.flush_soon())
    finally:
        done.update(outcomes.flush())
    return done


# --- the dispatch loop ---------------------------------------------------------------------------

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_inflight: set[Future] = set()
HELD_BACK_RETRIES = 50
HELD_BACK_PAUSE_SECONDS = 0.02


def _send_pool() -> ThreadPoolExecutor:
    """One long-lived pool per process (made after a prefork worker forks), so the threads'
    database connections are reused between dispatches instead of opened each time."""
    global _pool, _pool_pid
    if _pool is None or _pool_pid != os.getpid():
        _pool = ThreadPoolExecutor(max_workers=conf.dispatch_threads(), thread_name_prefix="webhook-send")
        _pool_pid = os.getpid()
        _inflight.clear()
    return _pool


_writers: ThreadPoolExecutor | None = None
_writers_pid = 0


def _writer_pool() -> ThreadPoolExecutor:
    """Threads that write outcomes for the senders of this process (WEBHOOK_OUTCOME_WRITERS),
    each with its own database connection."""
    global _writers, _writers_pid
    if _writers is None or _writers_pid != os.getpid():
        _writers = ThreadPoolExecutor(max_workers=conf.outcome_writers(), thread_name_prefix="webhook-write")
        _writers_pid = os.getpid()
    return _writers


def send_pool_close() -> None:
    """Close every sender and writer thread's database connection and their pools (tests;
    worker shutdown)."""
    global _pool, _writers
    pool, _pool = _pool, None
    writers, _writers = _writers, None
    for each in (pool, writers):
        if each is not None:
            _threads_close(each)


def _threads_close(pool: ThreadPoolExecutor) -> None:
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


_test_pool: ThreadPoolExecutor | None = None
_test_pool_pid = 0


def test_pool() -> ThreadPoolExecutor:
    """Test sends' own threads, per process (WEBHOOK_TEST_THREADS)."""
    global _test_pool, _test_pool_pid
    if _test_pool is None or _test_pool_pid != os.getpid():
        _test_pool = ThreadPoolExecutor(max_workers=conf.test_threads(), thread_name_prefix="webhook-test")
        _test_pool_pid = os.getpid()
    return _test_pool


def in_thread(function: Callable[..., None], **kwargs: str) -> None:
    """Run a service in a pool thread: its own (reused) database connection."""
    close_old_connections()
    try:
        function(**kwargs)
    except Exception:
        logger.exception("webhook background job failed: %s", getattr(function, "__name__", function))


def _groups(claimed: list[Delivery]) -> list[list[Delivery]]:
    groups: dict[str, list[Delivery]] = {}
    for delivery in claimed:
        groups.setdefault(delivery.webhook_id, []).append(delivery)
    return list(groups.values())


def deliveries_dispatch_due(
    *, webhook_ids: Iterable[str] | None = None, limit: int | None = None, budget_seconds: float = 20.0
) -> int:
    """Claim due deliveries (of the given webhooks, or all) and send them until nothing is due
    or the time budget is spent (the beat runs again in 2 s). Returns the attempts made.

    With WEBHOOK_DISPATCH_THREADS > 1 each claimed webhook gets its own sender thread, and a
    thread that finishes is refilled by the next claim at once: a slow receiver holds one
    thread while the others keep going."""
    hooks = list(webhook_ids) if webhook_ids is not None else None
    limit = limit or conf.dispatch_batch_size()
    slots = conf.dispatch_threads()
    started = time.monotonic()
    total = 0
    waits = 0
    if slots <= 1:
        while True:
            token, claimed, held_back = deliveries_claim(limit=limit, webhook_ids=hooks)
            for group in _groups(claimed):
                total += len(_send_group(token, group, in_thread=False))
            if time.monotonic() - started > budget_seconds:
                break
            if held_back and waits < HELD_BACK_RETRIES:
                waits += 1
                if not claimed:
                    time.sleep(HELD_BACK_PAUSE_SECONDS)
                continue
            if not claimed:
                break
        return total
    pool = _send_pool()
    mine: set[Future] = set()
    while True:
        free = slots - len(_inflight)
        claimed = []
        held_back = False
        if free > 0 and time.monotonic() - started <= budget_seconds:
            token, claimed, held_back = deliveries_claim(limit=limit, webhook_ids=hooks, max_webhooks=free)
            for group in _groups(claimed):
                future = pool.submit(_send_group, token, group, in_thread=True)
                _inflight.add(future)
                future.add_done_callback(_inflight.discard)
                mine.add(future)
        if held_back and not claimed and waits < HELD_BACK_RETRIES:
            waits += 1
            time.sleep(HELD_BACK_PAUSE_SECONDS)
            continue
        running = {f for f in mine if not f.done()}
        for future in mine - running:
            total += len(future.result())
        mine = running
        if not mine and not claimed:
            break
        if claimed and free - len(_groups(claimed)) > 0:
            continue  # still free senders: see whether more is due
        if mine:
            wait(mine, timeout=0.2, return_when=FIRST_COMPLETED)
    return total


START_MARKER_SECONDS = 5


def start_marker(webhook_id: str) -> str:
    return f"trustcal:webhooks:start-queued:{webhook_id}"


def deliveries_start(*, delivery_ids: Iterable[str]) -> int:
    """Right after commit: start the given deliveries' webhooks (in order, via the claim).

    A webhook that someone is sending to right now is left to that sender: it claims again
    when its rows are done and finds these (or, past its time budget, the beat does within
    2 s). Without this shortcut a burst of events queued one start task each, and every one
    of them ran the full claim query against the webhook being sent to."""
    ids = list(delivery_ids)
    # First clear the "start queued" markers (services._deliveries_start_once): an event
    # committed from here on queues a start of its own.
    hooks_of = set(Delivery.objects.filter(id__in=ids).values_list("webhook_id", flat=True))
    cache.delete_many([start_marker(hook) for hook in hooks_of])
    busy = Delivery.objects.filter(
        webhook_id=OuterRef("webhook_id"), status=Delivery.Status.PENDING, claimed_until__gt=timezone.now()
    ).exclude(event_type=TEST_EVENT_TYPE)
    hooks = set(
        Delivery.objects.filter(id__in=ids, status=Delivery.Status.PENDING)
        .exclude(Exists(busy))
        .values_list("webhook_id", flat=True)
    )
    return deliveries_dispatch_due(webhook_ids=sorted(hooks)) if hooks else 0


__all__ = ["Claim", "claim_release", "deliveries_claim"]
