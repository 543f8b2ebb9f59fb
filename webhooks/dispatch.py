"""The delivery dispatcher: picks due webhooks fairly, gives each one holder (webhooks/holder.py)
that claims and sends its rows in order, records outcomes in bulk (docs/reference/webhooks.md, "Delivery
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
  traceback, leaves the delivery pending for a later retry and counts in /metrics.

One attempt is webhooks/attempt.py, the threads webhooks/pools.py."""

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import cast

from django.core.cache import cache
from django.db import close_old_connections
from django.db.models import Exists, OuterRef
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from webhooks import conf, pools
from webhooks.claims import Claim, claim_release, claim_token, deliveries_claim, webhook_claim, webhooks_pick
from webhooks.events import TEST_EVENT_TYPE
from webhooks.holder import Holder
from webhooks.models import Delivery

logger = logging.getLogger("trustcal.webhooks")

HELD_BACK_RETRIES = 50
HELD_BACK_PAUSE_SECONDS = 0.02


def _hold(webhook_id: str, *, until: float) -> tuple[int, bool]:
    """A sender thread: hold one webhook (its own database connection, reused). Returns the
    attempts made and whether the time budget cut the holder short."""
    close_old_connections()
    try:
        holder = Holder(webhook_id, claim_token(), threaded=True)
        return holder.run(until=until), holder.cut
    finally:
        with pools.holding_lock:
            pools.holding.pop(webhook_id, None)


def _holder_submit(
    pool: ThreadPoolExecutor, hook: str, customer: str, function: Callable[..., object], **kwargs: float
) -> Future[object] | None:
    """Run `function(hook, **kwargs)` on a sender thread unless this process already holds the
    webhook; the thread counts as busy until it ends."""
    with pools.holding_lock:
        if hook in pools.holding:
            return None
        pools.holding[hook] = customer
    future = pool.submit(function, hook, **kwargs)
    pools.inflight.add(future)
    future.add_done_callback(pools.inflight.discard)
    return future


@dataclass
class _Dispatch:
    """One call of deliveries_dispatch_due: what to pick from and what the holders did."""

    hooks: list[str] | None
    limit: int
    until: float
    first: list[tuple[str, str]]
    total: int = 0
    empty: dict[str, int] = field(default_factory=dict)  # webhooks whose holder found nothing (held back)
    cut: set[str] = field(default_factory=set)  # webhooks whose holder the budget stopped

    def pick(self, free: int | None = None) -> list[tuple[str, str]]:
        """The `start` webhooks first (at most `free`), then due ones; `free` None: any number."""
        if self.first:
            picked = self.first if free is None else self.first[:free]
            self.first = [] if free is None else self.first[free:]
            return picked
        skip = [hook for hook, n in self.empty.items() if n >= HELD_BACK_RETRIES]
        if free is None:
            return webhooks_pick(limit=self.limit, webhook_ids=self.hooks, skip=skip)
        with pools.holding_lock:
            holding = dict(pools.holding)
        return webhooks_pick(
            limit=self.limit, webhook_ids=self.hooks, max_webhooks=free, holding=holding, skip=skip
        )

    def record(self, hook: str, sent: int, was_cut: bool) -> None:
        self.total += sent
        if was_cut:
            self.cut.add(hook)
        if not sent:
            self.empty[hook] = self.empty.get(hook, 0) + 1


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
    if conf.dispatch_threads() > 1 and background:
        return _holders_start(
            webhook_ids=hooks, limit=limit, budget_seconds=budget_seconds, first=list(start or [])
        )
    run = _Dispatch(
        hooks=hooks, limit=limit, until=time.monotonic() + budget_seconds, first=list(start or [])
    )
    if conf.dispatch_threads() <= 1:
        _dispatch_inline(run)
    else:
        _dispatch_threaded(run)
    _continue_soon(run.cut)
    return run.total


def _dispatch_inline(run: _Dispatch) -> None:
    """Holders one after another in the caller's thread (WEBHOOK_DISPATCH_THREADS = 1)."""
    while time.monotonic() < run.until:
        picked = run.pick()
        if not picked:
            return
        before = run.total
        for hook, _customer in picked:
            holder = Holder(hook, claim_token(), threaded=False)
            run.record(hook, holder.run(until=run.until), holder.cut)
        if run.total == before:
            time.sleep(HELD_BACK_PAUSE_SECONDS)


def _dispatch_threaded(run: _Dispatch) -> None:
    """One holder per sender thread; a thread that ends is refilled at once while time is left."""
    pool = pools.send_pool()
    slots = conf.dispatch_threads()
    mine: dict[Future[object], str] = {}
    while True:
        free = slots - len(pools.inflight)
        started = 0
        if free > 0 and time.monotonic() < run.until:
            for hook, customer in run.pick(free):
                future = _holder_submit(pool, hook, customer, _hold, until=run.until)
                if future is not None:
                    mine[future] = hook
                    started += 1
        for future in [f for f in mine if f.done()]:
            sent, was_cut = cast("tuple[int, bool]", future.result())  # _hold's
            run.record(mine.pop(future), sent, was_cut)
        if not mine and not started:
            return
        if started and free - started > 0:
            continue  # still free senders: see whether more is due
        if mine:
            wait(list(mine), timeout=0.2, return_when=FIRST_COMPLETED)


def _holders_start(
    *, webhook_ids: list[str] | None, limit: int, budget_seconds: float, first: list[tuple[str, str]]
) -> int:
    """Start holders in this process's free sender threads without waiting for them."""
    pool = pools.send_pool()
    free = conf.dispatch_threads() - len(pools.inflight)
    if free <= 0:
        return 0
    if first:
        picked = first[:free]
    else:
        with pools.holding_lock:
            holding = dict(pools.holding)
        picked = webhooks_pick(limit=limit, webhook_ids=webhook_ids, max_webhooks=free, holding=holding)
    until = time.monotonic() + budget_seconds
    futures = [
        _holder_submit(
            pool, hook, customer, _hold_then_refill, until=until, limit=limit, budget_seconds=budget_seconds
        )
        for hook, customer in picked
    ]
    return sum(future is not None for future in futures)


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
