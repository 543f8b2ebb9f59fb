"""The delivery dispatcher: picks due webhooks fairly, gives each one holder that claims and
sends its rows in order, records outcomes in bulk (docs/reference/webhooks.md, "Delivery
guarantees", "Order", "Claims and fencing", "Fairness"; docs/architecture.md, "Webhook
dispatcher"). In short:

- Durable rows: a delivery is a row from the moment its event is recorded. A claim is a lease
  (`claimed_until`) plus the holder's random `claim_token` set on the rows by one
  UPDATE ... RETURNING (webhooks/claims.py); outcomes, the back-off and its reset are written
  only while the token still matches, so a holder whose lease ran out (or whose worker was
  killed) cannot overwrite a newer claim.
- One holder per webhook: the only sender of its rows, one request at a time, in event order.
  While it sends a claim's rows, the next claim and a fresh read of the webhook run on a writer
  thread (one claim ahead), and so do the outcome writes: nothing waits on the database between
  two sends.
- Shares: a customer's webhooks are sent to by at most WEBHOOK_DISPATCH_PER_CUSTOMER holders at
  once (checked inside the claim); a holder lets go after WEBHOOK_DISPATCH_SLICE_SECONDS when
  others wait for a sender.
- Back-off: a timeout gives back the rest of that webhook's claim and pauses that webhook alone
  (doubling per consecutive timeout, capped); other webhooks are not affected.
- A killed worker re-sends at most its unwritten outcomes (at least once). Connections are kept
  alive per webhook.
- Only transport failures count as attempts; a bug of ours while sending is logged with its
  traceback, leaves the delivery pending for a later retry and counts in /metrics."""

import contextlib
import datetime as dt
import functools
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
from kombu.exceptions import OperationalError as KombuOperationalError

from config.timeutils import isoformat
from webhooks import conf, connections, signing, transport
from webhooks.claims import Claim, claim_release, claim_token, deliveries_claim, webhook_claim, webhooks_pick
from webhooks.events import TEST_EVENT_TYPE
from webhooks.models import Delivery, DispatchCounter, Event, Webhook
from webhooks.outcomes import Outcomes, back_off, recovered

logger = logging.getLogger("trustcal.webhooks")


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
        target = transport.resolve(webhook.url, rules=transport.url_rules())
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
    sent = _Holder(delivery.webhook_id, token, threaded=False, webhook=webhook).send([delivery])
    if not sent:
        return None
    return next(iter(sent.values()))


class _Stop(Exception):
    """The holder stops: its unsent rows go back (after its outcomes are written)."""


class _Holder:
    """The one sender of one webhook. It sends its claimed rows in event order over the
    webhook's kept connection; while it sends, the next claim of its webhook (one
    `UPDATE ... RETURNING`) and a fresh read of the webhook (status, URL, secrets) run on a
    writer thread, and so do the outcome writes: between two sends nothing waits on the
    database. It keeps the webhook while rows are due, within the call's time budget; after
    WEBHOOK_DISPATCH_SLICE_SECONDS it lets go when another webhook may be waiting for a sender."""

    def __init__(
        self, webhook_id: str, token: str, *, threaded: bool, webhook: Webhook | None = None
    ) -> None:
        self.webhook_id = webhook_id
        self.token = token
        self.threaded = threaded
        self.writer = _writer_pool() if threaded else None
        self.outcomes = Outcomes(token, writer=self.writer)
        self.webhook = webhook
        self.done: dict[str, bool] = {}
        self.cut = False  # stopped by the time budget while rows may still be due

    # --- the database side (a writer thread when threaded) ---

    def _next(self, *, yielding: bool) -> tuple[Webhook | None, list[Delivery]]:
        """The webhook read again and its next claim; none when `yielding` (the holder's slice
        is over) and another webhook waits for a sender."""
        webhook = Webhook.objects.filter(pk=self.webhook_id).first()
        if webhook is None or (yielding and _others_waiting(webhook)):
            return webhook, []
        rows = webhook_claim(
            webhook_id=self.webhook_id,
            customer_id=webhook.customer_id,
            token=self.token,
            limit=conf.dispatch_per_webhook(),
        )
        return webhook, rows

    # --- the loop ---

    def run(self, *, until: float) -> int:
        """Claim and send this webhook's due rows until none are left, the budget (`until`,
        monotonic) is spent, or the slice is over and others wait. Returns attempts made."""
        slice_end = time.monotonic() + conf.dispatch_slice_seconds()
        ahead: Future[tuple[Webhook | None, list[Delivery]]] | None = None
        try:
            self.webhook, rows = self._next(yielding=False)
            while rows:
                now = time.monotonic()
                more = now < until
                yielding = now >= slice_end
                if more and self.writer is not None:
                    # one claim ahead, while this one is sent
                    ahead = self.writer.submit(_in_writer, functools.partial(self._next, yielding=yielding))
                self.send(rows, release=False)
                if ahead is not None:
                    self.webhook, rows = ahead.result()
                    ahead = None
                elif more:
                    self.webhook, rows = self._next(yielding=yielding)
                else:
                    self.cut, rows = True, []
        except _Stop:
            pass
        finally:
            if ahead is not None:
                with contextlib.suppress(Exception):
                    ahead.result()
            self.done.update(self.outcomes.flush())
            claim_release(token=self.token)
        return len(self.done)

    def send(self, deliveries: list[Delivery], *, release: bool = True) -> dict[str, bool]:
        """Send claimed rows in order. A timeout, a disabled or deleted webhook, a bug of ours
        or a lost lease stops the holder (raises _Stop when called from run)."""
        lease = dt.timedelta(seconds=conf.lease_seconds())
        margin = min(dt.timedelta(seconds=conf.timeout_seconds() + 10), lease)
        lease_until = min((d.claimed_until for d in deliveries if d.claimed_until), default=None)
        stopped = False
        try:
            for index, delivery in enumerate(deliveries):
                webhook = self.webhook
                if webhook is None:
                    webhook = self.webhook = Webhook.objects.filter(pk=self.webhook_id).first()
                if webhook is None or webhook.status != Webhook.Status.ENABLED:
                    stopped = True
                    break
                now = timezone.now()
                if lease_until is None or lease_until - now < margin:
                    rest = [d.pk for d in deliveries[index:]]
                    extended = Delivery.objects.filter(
                        pk__in=rest, claim_token=self.token, status=Delivery.Status.PENDING
                    ).update(claimed_until=now + lease)
                    if extended < len(rest):
                        stopped = True  # part of the claim was taken over: stop rather than send out of order
                        break
                    lease_until = now + lease
                try:
                    result = send(webhook, delivery.event, now)
                except Exception:
                    logger.exception(
                        "delivery %s: internal error while sending (not counted as an attempt)", delivery.pk
                    )
                    self.done.update(self.outcomes.flush())
                    internal_error_count(delivery_id=delivery.pk, token=self.token)
                    stopped = True
                    break
                if _is_timeout(result):
                    back_off(webhook, token=self.token, delivery_id=delivery.pk)
                    self.outcomes.add(delivery, now, result)
                    stopped = True
                    break
                self.outcomes.add(delivery, now, result)
                if result.ok:
                    if webhook.consecutive_timeouts or webhook.backoff_until:
                        self.done.update(self.outcomes.flush())
                        recovered(webhook, token=self.token, delivery_id=delivery.pk)
                elif delivery.attempt_count + 1 >= conf.MAX_ATTEMPTS:
                    self.done.update(self.outcomes.flush())
                    self.webhook = None  # it may just have been disabled: read it again
                if self.outcomes.due():
                    self.done.update(self.outcomes.flush_soon())
        finally:
            if release:
                self.done.update(self.outcomes.flush())
                claim_release(token=self.token, delivery_ids=[d.pk for d in deliveries])
        if stopped and not release:
            raise _Stop  # run() writes the outcomes and gives back every unsent row
        return self.done


def _others_waiting(webhook: Webhook) -> bool:
    """At the end of a holder's slice: does another webhook wait for a sender? Yes when every
    sender of this process is busy, or another webhook of the same customer is due and nobody
    sends to it (the customer's share may be what keeps it waiting)."""
    if len(_inflight) >= conf.dispatch_threads():
        return True
    return bool(
        webhooks_pick(
            limit=conf.dispatch_batch_size(),
            skip=[webhook.pk],
            max_webhooks=1,
            customer_id=webhook.customer_id,
        )
    )


# --- the dispatch loop ---------------------------------------------------------------------------

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_inflight: set[Future] = set()
_holding: dict[str, str] = {}  # webhook id -> customer id, holders of this process
_holding_lock = threading.Lock()
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
        _holding.clear()
    return _pool


_writers: ThreadPoolExecutor | None = None
_writers_pid = 0


def _writer_pool() -> ThreadPoolExecutor:
    """Threads that claim ahead and write outcomes for the holders of this process
    (WEBHOOK_OUTCOME_WRITERS), each with its own database connection."""
    global _writers, _writers_pid
    if _writers is None or _writers_pid != os.getpid():
        _writers = ThreadPoolExecutor(max_workers=conf.outcome_writers(), thread_name_prefix="webhook-write")
        _writers_pid = os.getpid()
    return _writers


def _in_writer[T](function: Callable[[], T]) -> T:
    """A writer thread: its own database connection, reused between jobs (CONN_MAX_AGE)."""
    close_old_connections()
    return function()


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


def _hold(webhook_id: str, *, until: float) -> tuple[int, bool]:
    """A sender thread: hold one webhook (its own database connection, reused). Returns the
    attempts made and whether the time budget cut the holder short."""
    close_old_connections()
    try:
        holder = _Holder(webhook_id, claim_token(), threaded=True)
        return holder.run(until=until), holder.cut
    finally:
        with _holding_lock:
            _holding.pop(webhook_id, None)


def deliveries_dispatch_due(
    *,
    webhook_ids: Iterable[str] | None = None,
    limit: int | None = None,
    budget_seconds: float = 20.0,
    start: list[tuple[str, str]] | None = None,
    background: bool = False,
) -> int:
    """Start holders for due webhooks (of the given ones, or all) and let them send until
    nothing is due or the time budget is spent (the beat runs again in 2 s). Returns the
    attempts made.

    With WEBHOOK_DISPATCH_THREADS > 1 each webhook gets its own sender thread, and a thread
    that finishes is refilled at once: a slow receiver holds one thread while the others keep
    going. With 1, holders run one after another in the caller's thread.

    `start` ((webhook id, customer id) pairs) are started first without looking for due rows
    (a start task that has just checked them): their claims check the rest.

    `background` (the worker's tasks, with sender threads): start holders and return at once
    with the number started, leaving the worker process free for the next task; each holder
    that sent something looks for more due webhooks when it ends (so a hanging receiver holds
    a sender thread, never a worker process that start tasks wait for)."""
    hooks = list(webhook_ids) if webhook_ids is not None else None
    limit = limit or conf.dispatch_batch_size()
    slots = conf.dispatch_threads()
    until = time.monotonic() + budget_seconds
    total = 0
    empty: dict[str, int] = {}  # webhooks whose holder found nothing to claim (held back)
    cut: set[str] = set()  # webhooks whose holder the budget stopped

    first = list(start or [])

    def skip() -> list[str]:
        return [hook for hook, n in empty.items() if n >= HELD_BACK_RETRIES]

    if slots <= 1:
        while time.monotonic() < until:
            picked, first = first or webhooks_pick(limit=limit, webhook_ids=hooks, skip=skip()), []
            if not picked:
                break
            sent_now = 0
            for hook, _customer in picked:
                holder = _Holder(hook, claim_token(), threaded=False)
                sent = holder.run(until=until)
                if holder.cut:
                    cut.add(hook)
                sent_now += sent
                if not sent:
                    empty[hook] = empty.get(hook, 0) + 1
            total += sent_now
            if not sent_now:
                time.sleep(HELD_BACK_PAUSE_SECONDS)
        _continue_soon(cut)
        return total
    if background:
        return _holders_start(webhook_ids=hooks, limit=limit, budget_seconds=budget_seconds, first=first)
    pool = _send_pool()
    mine: dict[Future, str] = {}
    while True:
        free = slots - len(_inflight)
        started = 0
        if free > 0 and time.monotonic() < until:
            with _holding_lock:
                holding = dict(_holding)
            if first:
                picked, first = first[:free], first[free:]
            else:
                picked = webhooks_pick(
                    limit=limit, webhook_ids=hooks, max_webhooks=free, holding=holding, skip=skip()
                )
            for hook, customer in picked:
                with _holding_lock:
                    if hook in _holding:
                        continue
                    _holding[hook] = customer
                future = pool.submit(_hold, hook, until=until)
                _inflight.add(future)
                future.add_done_callback(_inflight.discard)
                mine[future] = hook
                started += 1
        finished = [f for f in mine if f.done()]
        nothing = False
        for future in finished:
            hook = mine.pop(future)
            sent, was_cut = future.result()
            total += sent
            if was_cut:
                cut.add(hook)
            if not sent:
                empty[hook] = empty.get(hook, 0) + 1
                nothing = True
        if not mine and not started:
            break
        if started and free - started > 0:
            continue  # still free senders: see whether more is due
        if nothing and not started and not mine:
            time.sleep(HELD_BACK_PAUSE_SECONDS)
            continue
        if mine:
            wait(list(mine), timeout=0.2, return_when=FIRST_COMPLETED)
    _continue_soon(cut)
    return total


def _holders_start(
    *, webhook_ids: list[str] | None, limit: int, budget_seconds: float, first: list[tuple[str, str]]
) -> int:
    """Start holders in this process's free sender threads without waiting for them."""
    pool = _send_pool()
    free = conf.dispatch_threads() - len(_inflight)
    if free <= 0:
        return 0
    if first:
        picked = first[:free]
    else:
        with _holding_lock:
            holding = dict(_holding)
        picked = webhooks_pick(limit=limit, webhook_ids=webhook_ids, max_webhooks=free, holding=holding)
    until = time.monotonic() + budget_seconds
    started = 0
    for hook, customer in picked:
        with _holding_lock:
            if hook in _holding:
                continue
            _holding[hook] = customer
        future = pool.submit(_hold_then_refill, hook, until=until, limit=limit, budget_seconds=budget_seconds)
        _inflight.add(future)
        future.add_done_callback(_inflight.discard)
        started += 1
    return started


def _hold_then_refill(hook: str, *, until: float, limit: int, budget_seconds: float) -> None:
    """A background holder; when it has sent something, its thread looks for the next due
    webhooks (a holder that found nothing leaves them to the beat, so nothing spins)."""
    try:
        sent, _cut = _hold(hook, until=until)
        if sent:
            _holders_start(webhook_ids=None, limit=limit, budget_seconds=budget_seconds, first=[])
    except Exception:
        logger.exception("webhook %s: the holder failed", hook)


def _continue_soon(webhook_ids: set[str]) -> None:
    """Webhooks whose holders the time budget stopped get a start task at once, rather than
    idling until the next beat (up to 2 s)."""
    if not webhook_ids:
        return
    from webhooks.tasks import deliveries_continue

    try:
        deliveries_continue.delay(sorted(webhook_ids))
    except KombuOperationalError:
        logger.exception("webhooks %s: the continuation could not be queued", sorted(webhook_ids))


START_MARKER_SECONDS = 5


def start_marker(webhook_id: str) -> str:
    return f"trustcal:webhooks:start-queued:{webhook_id}"


def deliveries_start(
    *,
    delivery_ids: Iterable[str],
    webhook_ids: Iterable[str] | None = None,
    customer_id: str | None = None,
    background: bool = False,
) -> int:
    """Right after commit: start the given deliveries' webhooks (in order, via the claim).

    A webhook that someone is sending to right now is left to that sender: it claims again
    when its rows are done and finds these (or, past its time budget, the beat does within
    2 s). When the emitter says which webhooks and customer these are, their holders start
    without reading anything first (the first byte comes sooner): the claim of a holder whose
    webhook is being sent to takes nothing, and it ends."""
    ids = list(delivery_ids)
    if webhook_ids is not None and customer_id is not None:
        hooks_given = sorted(set(webhook_ids))
        cache.delete_many([start_marker(hook) for hook in hooks_given])
        return deliveries_dispatch_due(
            webhook_ids=hooks_given,
            start=[(hook, customer_id) for hook in hooks_given],
            background=background,
        )
    # First clear the "start queued" markers (services._deliveries_start_once): an event
    # committed from here on queues a start of its own.
    if webhook_ids is not None:
        hooks_of = set(webhook_ids)
    else:
        hooks_of = set(Delivery.objects.filter(id__in=ids).values_list("webhook_id", flat=True))
    cache.delete_many([start_marker(hook) for hook in hooks_of])
    busy = Delivery.objects.filter(
        webhook_id=OuterRef("webhook_id"), status=Delivery.Status.PENDING, claimed_until__gt=timezone.now()
    ).exclude(event_type=TEST_EVENT_TYPE)
    hooks = sorted(
        set(
            Delivery.objects.filter(id__in=ids, status=Delivery.Status.PENDING)
            .exclude(Exists(busy))
            .values_list("webhook_id", "webhook__customer_id")
        )
    )
    if not hooks:
        return 0
    return deliveries_dispatch_due(
        webhook_ids=[hook for hook, _ in hooks], start=hooks, background=background
    )


__all__ = ["Claim", "claim_release", "deliveries_claim", "webhook_claim"]
