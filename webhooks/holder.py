"""The one sender of one webhook (a holder): it claims its webhook's due rows and sends them in
event order, recording outcomes in bulk (docs/architecture.md, "Webhook dispatcher")."""

import contextlib
import datetime as dt
import functools
import logging
import time
from concurrent.futures import Future

from django.utils import timezone

from webhooks import attempt, conf, pools
from webhooks.claims import claim_release, webhook_claim, webhooks_pick
from webhooks.models import Delivery, Webhook
from webhooks.outcomes import Outcomes, back_off, recovered

logger = logging.getLogger("trustcal.webhooks")


def delivery_attempt(*, delivery: Delivery, token: str, webhook: Webhook | None = None) -> bool | None:
    """One attempt of a claimed delivery, its outcome written at once. True/False for
    success/failure, None when the claim was lost or the webhook is gone or disabled."""
    sent = Holder(delivery.webhook_id, token, threaded=False, webhook=webhook).send([delivery])
    if not sent:
        return None
    return next(iter(sent.values()))


class Stop(Exception):
    """The holder stops: its unsent rows go back (after its outcomes are written)."""


class Holder:
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
        self.writer = pools.writer_pool() if threaded else None
        self.outcomes = Outcomes(token, writer=self.writer)
        self.webhook = webhook
        self.done: dict[str, bool] = {}
        self.cut = False  # stopped by the time budget while rows may still be due

    # --- the database side (a writer thread when threaded) ---

    def _next(self, *, yielding: bool) -> tuple[Webhook | None, list[Delivery]]:
        """The webhook read again and its next claim; none when `yielding` (the holder's slice
        is over) and another webhook waits for a sender."""
        webhook = Webhook.objects.filter(pk=self.webhook_id).first()
        if webhook is None or (yielding and others_waiting(webhook)):
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
                    ahead = self.writer.submit(
                        pools.in_writer, functools.partial(self._next, yielding=yielding)
                    )
                self.send(rows, release=False)
                if ahead is not None:
                    self.webhook, rows = ahead.result()
                    ahead = None
                elif more:
                    self.webhook, rows = self._next(yielding=yielding)
                else:
                    self.cut, rows = True, []
        except Stop:
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
        or a lost lease stops the holder (raises Stop when called from run)."""
        lease_until = min((d.claimed_until for d in deliveries if d.claimed_until), default=None)
        stopped = False
        try:
            for index, delivery in enumerate(deliveries):
                webhook = self._enabled_webhook()
                now = timezone.now()
                if webhook is not None:
                    lease_until = self._lease_kept(deliveries[index:], lease_until, now)
                if webhook is None or lease_until is None or not self._attempt(webhook, delivery, now):
                    stopped = True
                    break
        finally:
            if release:
                self.done.update(self.outcomes.flush())
                claim_release(token=self.token, delivery_ids=[d.pk for d in deliveries])
        if stopped and not release:
            raise Stop  # run() writes the outcomes and gives back every unsent row
        return self.done

    def _enabled_webhook(self) -> Webhook | None:
        """The webhook as last read (read again when unknown); None when gone or not enabled."""
        if self.webhook is None:
            self.webhook = Webhook.objects.filter(pk=self.webhook_id).first()
        if self.webhook is None or self.webhook.status != Webhook.Status.ENABLED:
            return None
        return self.webhook

    def _lease_kept(
        self, rest: list[Delivery], lease_until: dt.datetime | None, now: dt.datetime
    ) -> dt.datetime | None:
        """The lease of the rows still to send, extended when it would run out before an
        attempt could end; None when part of the claim was taken over (stop rather than send
        out of order)."""
        lease = dt.timedelta(seconds=conf.lease_seconds())
        margin = min(dt.timedelta(seconds=conf.timeout_seconds() + 10), lease)
        if lease_until is not None and lease_until - now >= margin:
            return lease_until
        ids = [d.pk for d in rest]
        extended = Delivery.objects.filter(
            pk__in=ids, claim_token=self.token, status=Delivery.Status.PENDING
        ).update(claimed_until=now + lease)
        return now + lease if extended == len(ids) else None

    def _attempt(self, webhook: Webhook, delivery: Delivery, now: dt.datetime) -> bool:
        """One attempt and its outcome (buffered); False when the holder must stop."""
        try:
            result = attempt.send(webhook, delivery.event, now)
        except Exception:
            logger.exception(
                "delivery %s: internal error while sending (not counted as an attempt)", delivery.pk
            )
            self.done.update(self.outcomes.flush())
            attempt.internal_error_count(delivery_id=delivery.pk, token=self.token)
            return False
        if attempt.is_timeout(result):
            back_off(webhook, token=self.token, delivery_id=delivery.pk)
            self.outcomes.add(delivery, now, result)
            return False
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
        return True


def others_waiting(webhook: Webhook) -> bool:
    """At the end of a holder's slice: does another webhook wait for a sender? Yes when every
    sender of this process is busy, or another webhook of the same customer is due and nobody
    sends to it (the customer's share may be what keeps it waiting)."""
    if len(pools.inflight) >= conf.dispatch_threads():
        return True
    return bool(
        webhooks_pick(
            limit=conf.dispatch_batch_size(),
            skip=[webhook.pk],
            max_webhooks=1,
            customer_id=webhook.customer_id,
        )
    )
