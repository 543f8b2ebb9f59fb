"""Attempt outcomes written in bulk, and the per-webhook back-off (C9); see
webhooks/dispatch.py for the whole design."""

import datetime as dt
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future

from django.db import close_old_connections, transaction
from django.utils import timezone

from webhooks import conf, transport
from webhooks.models import Delivery, DeliveryAttempt, Webhook

logger = logging.getLogger("trustcal.webhooks")

_Batch = list[tuple[Delivery, dt.datetime, dt.datetime, transport.SendResult]]


class Outcomes:
    """Attempt outcomes of one claim, buffered and written together while the claim is still
    ours: one locking SELECT, one UPDATE per kind of outcome and one INSERT per flush. With a
    writer (a thread pool), routine flushes run there while the sender goes on sending."""

    def __init__(self, token: str, *, writer: Executor | None = None) -> None:
        self.token = token
        self.pending: _Batch = []
        self.last_flush = time.monotonic()
        self.writer = writer
        self.writing: Future[dict[str, bool]] | None = None

    def add(self, delivery: Delivery, attempted_at: dt.datetime, result: transport.SendResult) -> None:
        self.pending.append((delivery, attempted_at, timezone.now(), result))

    def due(self) -> bool:
        return len(self.pending) >= conf.outcome_batch() or (
            time.monotonic() - self.last_flush >= conf.outcome_flush_seconds()
        )

    def flush(self) -> dict[str, bool]:
        """Write the buffered outcomes now, after the one being written in the background;
        returns {delivery id: ok} for those still ours."""
        written = self._written()
        written.update(self._write(self._take()))
        return written

    def flush_soon(self) -> dict[str, bool]:
        """With a writer: hand the buffered outcomes to it and go on sending (one write in
        flight at a time, so the sender waits only when the previous one is not done);
        returns the outcomes written meanwhile. Without one, the same as flush()."""
        if self.writer is None:
            return self.flush()
        written = self._written()
        batch = self._take()
        if batch:
            self.writing = self.writer.submit(_in_writer, self._write, batch)
        return written

    def _written(self) -> dict[str, bool]:
        writing, self.writing = self.writing, None
        return writing.result() if writing is not None else {}

    def _take(self) -> _Batch:
        batch, self.pending = self.pending, []
        self.last_flush = time.monotonic()
        return batch

    def _write(self, batch: _Batch) -> dict[str, bool]:
        if not batch:
            return {}
        written: dict[str, bool] = {}
        with transaction.atomic():
            ids = [d.pk for d, *_ in batch]
            mine = set(
                Delivery.objects.select_for_update()
                .filter(pk__in=ids, claim_token=self.token, status=Delivery.Status.PENDING)
                .values_list("pk", flat=True)
            )
            rows, attempts, disable = [], [], set()
            for delivery, attempted_at, finished, result in batch:
                number = delivery.attempt_count + 1
                if delivery.pk not in mine:
                    logger.warning(
                        "delivery %s: claim lost or row deleted during attempt %s; outcome dropped",
                        delivery.pk,
                        number,
                    )
                    continue
                delivery.attempt_count = number
                delivery.last_response_status = result.status
                delivery.claimed_until = None
                delivery.claim_token = None
                if result.ok:
                    delivery.status = Delivery.Status.SUCCEEDED
                    delivery.next_attempt_at = None
                    delivery.completed_at = finished
                elif number >= conf.MAX_ATTEMPTS:
                    delivery.status = Delivery.Status.FAILED
                    delivery.next_attempt_at = None
                    delivery.completed_at = finished
                    disable.add(delivery.webhook_id)
                else:
                    delay = conf.RETRY_DELAYS_SECONDS[number - 1]
                    delivery.next_attempt_at = finished + dt.timedelta(seconds=delay)
                rows.append(delivery)
                attempts.append(
                    DeliveryAttempt(
                        delivery_id=delivery.pk,
                        attempt=number,
                        attempted_at=attempted_at,
                        response_status=result.status,
                        duration_ms=result.duration_ms,
                        error=(result.error or None) and result.error[:500],
                        response_body=result.body[: conf.RESPONSE_BODY_LIMIT],
                    )
                )
                written[delivery.pk] = result.ok
            if rows:
                _rows_write(rows)
                DeliveryAttempt.objects.bulk_create(attempts)
            now = timezone.now()
            for webhook_id in sorted(disable):
                Webhook.objects.filter(pk=webhook_id, status=Webhook.Status.ENABLED).update(
                    status=Webhook.Status.DISABLED,
                    disabled_reason=conf.DISABLED_REASON_FAILURES,
                    disabled_at=now,
                    updated_at=now,
                )
        return written


def _in_writer(write: Callable[[_Batch], dict[str, bool]], batch: _Batch) -> dict[str, bool]:
    """A writer thread: its own database connection, reused between writes (CONN_MAX_AGE)."""
    close_old_connections()
    return write(batch)


def _rows_write(rows: list[Delivery]) -> None:
    """One plain UPDATE per distinct set of new values, so a flush of successes answered with the
    same status code is one statement (Django's bulk_update builds a CASE per field and row, and
    compiling it cost more than the sends). A group's `completed_at` is its latest finish, at
    most one flush interval after the others; the attempt rows keep each exact time."""
    groups: dict[tuple, list[Delivery]] = {}
    for row in rows:
        key = (row.status, row.attempt_count, row.last_response_status, row.next_attempt_at)
        groups.setdefault(key, []).append(row)
    for (status, attempts, response_status, next_attempt_at), members in groups.items():
        finished = [m.completed_at for m in members if m.completed_at is not None]
        Delivery.objects.filter(pk__in=[m.pk for m in members]).update(
            status=status,
            attempt_count=attempts,
            last_response_status=response_status,
            next_attempt_at=next_attempt_at,
            completed_at=max(finished) if finished else None,
            claimed_until=None,
            claim_token=None,
        )


def back_off(webhook: Webhook) -> None:
    """A timeout: pause this webhook alone (base * 2^(n-1) seconds, capped)."""
    n = webhook.consecutive_timeouts + 1
    pause = min(conf.backoff_max_seconds(), conf.backoff_base_seconds() * 2 ** min(n - 1, 20))
    until = timezone.now() + dt.timedelta(seconds=pause)
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_timeouts=n, backoff_until=until)
    webhook.consecutive_timeouts, webhook.backoff_until = n, until


def recovered(webhook: Webhook) -> None:
    if webhook.consecutive_timeouts or webhook.backoff_until:
        Webhook.objects.filter(pk=webhook.pk).update(consecutive_timeouts=0, backoff_until=None)
        webhook.consecutive_timeouts, webhook.backoff_until = 0, None
