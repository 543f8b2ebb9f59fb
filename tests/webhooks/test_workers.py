"""Real Celery worker processes against PostgreSQL: exactly-once under two workers, and a
worker SIGKILLed in the middle of an attempt loses nothing (docs/reference/webhooks.md,
"Delivery guarantees")."""

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from tests.processes import celery_worker
from tests.webhooks.helpers import emit, webhook
from tests.webhooks.receiver import HOLD
from webhooks.models import Delivery, DeliveryAttempt, Event

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _kill_tree(pid: int) -> None:
    """SIGKILL a process and all its descendants (the prefork pool child holds the attempt)."""
    children: list[int] = []
    stack = [pid]
    while stack:
        current = stack.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                kids = []
            children.extend(kids)
            stack.extend(kids)
    for target in [pid, *children]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGKILL)


def test_two_workers_deliver_200_events_exactly_once(transactional_db, insecure, receiver):
    webhook(receiver.url, ["*"])
    with celery_worker("w1", beat=True, concurrency=2), celery_worker("w2", concurrency=2):
        events = [emit("bias.detected", decision_id=f"dec_{i}") for i in range(200)]
        _wait_for(lambda: Delivery.objects.filter(status="succeeded").count() == 200, 45, "200 deliveries")
        time.sleep(1.0)  # a duplicate would arrive now, if there were one
    ids = receiver.ids()
    assert len(ids) == 200, f"{len(ids) - len(set(ids))} duplicates"
    assert ids == [e.id for e in events]  # one holder at a time: in event order
    assert DeliveryAttempt.objects.count() == 200
    assert not Delivery.objects.exclude(status="succeeded").exists()


def test_a_worker_killed_mid_attempt_loses_nothing(transactional_db, insecure, receiver):
    receiver.behaviour = lambda req: HOLD if len(receiver.requests) == 1 else (200, b"ok")
    webhook(receiver.url, ["*"])
    short_lease = {"WEBHOOK_LEASE_SECONDS": "4"}
    with celery_worker("victim", concurrency=1, **short_lease) as proc:
        event = emit()
        assert receiver.arrived.wait(30), "the first attempt never reached the receiver"
        _kill_tree(proc.pid)
        proc.wait(10)
    receiver.release.set()
    delivery = Delivery.objects.get(event=event)
    assert delivery.status == "pending" and delivery.attempt_count == 0  # the killed attempt left no outcome
    with celery_worker("rescuer", beat=True, concurrency=1, **short_lease):
        _wait_for(lambda: Delivery.objects.filter(event=event, status="succeeded").exists(), 30, "the retry")
    delivery.refresh_from_db()
    assert delivery.attempt_count == 1 and delivery.last_response_status == 200
    assert receiver.ids() == [event.id, event.id]
    assert Event.objects.count() == 1
