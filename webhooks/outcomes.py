"""Attempt outcomes written in bulk, and the per-webhook back-off (docs/reference/webhooks.md,
"Claims and fencing", "Back-off of a timing-out receiver"); see
webhooks/dispatch.py for the whole design."""

import datetime as dt
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future

from django.db import close_old_connections, connection
from django.db.models import Exists
from django.utils import timezone

from config.sqlparams import SQLValue
from webhooks import conf, transport
from webhooks.claims import bookkeeping
from webhooks.models import Delivery, DeliveryAttempt, Webhook

logger = logging.getLogger("trustcal.webhooks")

_Batch = list[tuple[Delivery, dt.datetime, dt.datetime, transport.SendResult]]
# One outcome kind of a flush: the rows' new status and response status (the last is unused).
_OutcomeKey = tuple[str, int | None, None]
# An attempt row: delivery id, attempt, attempted at, response status, duration, error, body.
_AttemptRow = tuple[str, int, dt.datetime, int | None, int, str | None, str]


class Outcomes:
    """Attempt outcomes of one holder, buffered and written a few at a time while the rows are
    still its own: per flush one `UPDATE ... RETURNING` per kind of outcome (fenced by the claim
    token: a row taken over by someone else is left alone) and one INSERT of the attempts. With
    a writer (a thread pool), routine flushes run there while the holder goes on sending, and
    the holder never waits for them until it stops."""

    def __init__(self, token: str, *, writer: Executor | None = None) -> None:
        self.token = token
        self.pending: _Batch = []
        self.last_flush = time.monotonic()
        self.writer = writer
        self.writing: list[Future[dict[str, bool]]] = []

    def add(self, delivery: Delivery, attempted_at: dt.datetime, result: transport.SendResult) -> None:
        self.pending.append((delivery, attempted_at, timezone.now(), result))

    def due(self) -> bool:
        return len(self.pending) >= conf.outcome_batch() or (
            time.monotonic() - self.last_flush >= conf.outcome_flush_seconds()
        )

    def flush(self) -> dict[str, bool]:
        """Write the buffered outcomes now, after every write handed to the writer is done;
        returns {delivery id: ok} for those that were still ours."""
        written = self._written(wait=True)
        written.update(self._write(self._take()))
        return written

    def flush_soon(self) -> dict[str, bool]:
        """With a writer: hand the buffered outcomes to it and go on sending; returns the
        outcomes written meanwhile. Without one, the same as flush()."""
        if self.writer is None:
            return self.flush()
        written = self._written(wait=False)
        batch = self._take()
        if batch:
            self.writing.append(self.writer.submit(_in_writer, self._write, batch))
        return written

    def _written(self, *, wait: bool) -> dict[str, bool]:
        written: dict[str, bool] = {}
        still = []
        for future in self.writing:
            if wait or future.done():
                written.update(future.result())
            else:
                still.append(future)
        self.writing = still
        return written

    def _take(self) -> _Batch:
        batch, self.pending = self.pending, []
        self.last_flush = time.monotonic()
        return batch

    def _write(self, batch: _Batch) -> dict[str, bool]:
        if not batch:
            return {}
        groups: dict[_OutcomeKey, _Batch] = {}
        for item in batch:
            delivery, _attempted_at, finished, result = item
            number = delivery.attempt_count + 1
            if result.ok:
                key: _OutcomeKey = (Delivery.Status.SUCCEEDED, result.status, None)
            elif number >= conf.MAX_ATTEMPTS:
                key = (Delivery.Status.FAILED, result.status, None)
            else:
                key = (Delivery.Status.PENDING, result.status, None)
            groups.setdefault(key, []).append(item)
        written: dict[str, bool] = {}
        attempts: list[_AttemptRow] = []
        disable = set()
        with bookkeeping():
            for (status, response_status, _), members in groups.items():
                finished = max(m[2] for m in members)
                retry_at = None
                if status == Delivery.Status.PENDING:
                    # each retry is due its delay after its own failure
                    retry_at = {
                        d.pk: done + dt.timedelta(seconds=conf.RETRY_DELAYS_SECONDS[d.attempt_count])
                        for d, _at, done, _result in members
                    }
                mine = _rows_write(
                    token=self.token,
                    ids=[m[0].pk for m in members],
                    status=status,
                    response_status=response_status,
                    retry_at=retry_at,
                    completed_at=None if status == Delivery.Status.PENDING else finished,
                )
                for delivery, attempted_at, _finished, result in members:
                    number = delivery.attempt_count + 1
                    if delivery.pk not in mine:
                        logger.warning(
                            "delivery %s: claim lost or row deleted during attempt %s; outcome dropped",
                            delivery.pk,
                            number,
                        )
                        continue
                    if status == Delivery.Status.FAILED:
                        disable.add(delivery.webhook_id)
                    attempts.append(
                        (
                            delivery.pk,
                            number,
                            attempted_at,
                            result.status,
                            result.duration_ms,
                            (result.error or None) and result.error[:500],
                            result.body[: conf.RESPONSE_BODY_LIMIT],
                        )
                    )
                    written[delivery.pk] = result.ok
            if attempts:
                _attempts_insert(attempts)
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


_ROWS_SQL = """
UPDATE webhooks_delivery
SET status = %(status)s, attempt_count = attempt_count + 1, last_response_status = %(response_status)s,
    next_attempt_at = {next_attempt_at}, completed_at = %(completed_at)s,
    claimed_until = NULL, claim_token = NULL
WHERE claim_token = %(token)s AND status = 'pending' AND id IN ({ids})
RETURNING id
"""


def _rows_write(
    *,
    token: str,
    ids: list[str],
    status: str,
    response_status: int | None,
    retry_at: dict[str, dt.datetime] | None,
    completed_at: dt.datetime | None,
) -> set[str]:
    """One outcome kind of a flush in one statement, only on rows the holder still has (the
    claim token matches); returns their ids. `retry_at` gives each retried row its own due
    time. A group's `completed_at` is its latest finish, at most one flush after the others;
    the attempt rows keep each exact time."""
    adapt = connection.ops.adapt_datetimefield_value
    params: dict[str, SQLValue] = {
        "status": status,
        "response_status": response_status,
        "completed_at": adapt(completed_at) if completed_at else None,
        "token": token,
    }
    names, cases = [], []
    for i, pk in enumerate(ids):
        params[f"id{i}"] = pk
        names.append(f"%(id{i})s")
        if retry_at is not None:
            params[f"at{i}"] = adapt(retry_at[pk])
            cases.append(f"WHEN %(id{i})s THEN %(at{i})s")
    next_attempt_at = f"CASE id {' '.join(cases)} END" if cases else "NULL"
    sql = _ROWS_SQL.format(ids=", ".join(names), next_attempt_at=next_attempt_at)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {row[0] for row in cursor.fetchall()}


def _attempts_insert(rows: list[_AttemptRow]) -> None:
    """The flush's attempt rows in one plain INSERT (no model instances: it runs beside the
    senders, on their interpreter)."""
    adapt = connection.ops.adapt_datetimefield_value
    table = connection.ops.quote_name(DeliveryAttempt._meta.db_table)
    columns = "delivery_id, attempt, attempted_at, response_status, duration_ms, error, response_body"
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(rows))
    params: list[SQLValue] = []
    for delivery_id, attempt, attempted_at, status, duration_ms, error, body in rows:
        params += [delivery_id, attempt, adapt(attempted_at), status, duration_ms, error, body]
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} ({columns}) VALUES {values}", params)  # noqa: S608


def _still_holding(token: str, delivery_id: str) -> Exists:
    return Exists(Delivery.objects.filter(pk=delivery_id, claim_token=token, status=Delivery.Status.PENDING))


def back_off(webhook: Webhook, *, token: str, delivery_id: str) -> bool:
    """A timeout: pause this webhook alone (base * 2^(n-1) seconds, capped). Fenced: written
    only while the holder still has the timed-out delivery (its outcome not yet recorded), so
    a holder whose lease ran out cannot pause a webhook someone else is sending to."""
    n = webhook.consecutive_timeouts + 1
    pause = min(conf.backoff_max_seconds(), conf.backoff_base_seconds() * 2 ** min(n - 1, 20))
    until = timezone.now() + dt.timedelta(seconds=pause)
    done = Webhook.objects.filter(_still_holding(token, delivery_id), pk=webhook.pk).update(
        consecutive_timeouts=n, backoff_until=until
    )
    if done:
        webhook.consecutive_timeouts, webhook.backoff_until = n, until
    return bool(done)


def recovered(webhook: Webhook, *, token: str, delivery_id: str) -> bool:
    """A success after timeouts: the webhook's back-off is over. Fenced like back_off."""
    if not (webhook.consecutive_timeouts or webhook.backoff_until):
        return False
    done = Webhook.objects.filter(_still_holding(token, delivery_id), pk=webhook.pk).update(
        consecutive_timeouts=0, backoff_until=None
    )
    if done:
        webhook.consecutive_timeouts, webhook.backoff_until = 0, None
    return bool(done)
