"""No customer can slow down another: a receiver that never answers holds one sender of its
own, is backed off alone, and test sends run on a worker (the web server stays free)."""

import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from tests.conftest import make_key
from tests.processes import celery_worker, gunicorn
from tests.webhooks.helpers import emit, webhook
from webhooks import dispatch, pools
from webhooks.models import Delivery, DeliveryAttempt, Webhook


def _dispatch_in_background(**kwargs) -> threading.Thread:
    def run() -> None:
        try:
            dispatch.deliveries_dispatch_due(**kwargs)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_a_never_answering_receiver_does_not_delay_another_customers_delivery(settings, receiver, hanging):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_DISPATCH_THREADS = 4
    settings.WEBHOOK_TIMEOUT_SECONDS = 12.0
    webhook(hanging.url, ["*"], name="noisy")
    for i in range(40):
        emit(name="noisy", decision_id=f"dec_{i}")
    assert hanging.arrived.wait(0) is False
    worker = _dispatch_in_background(budget_seconds=1.0)
    assert hanging.arrived.wait(5)
    webhook(receiver.url, ["*"], name="quiet")
    started = time.monotonic()
    quiet = emit(name="quiet")
    while not receiver.requests and time.monotonic() - started < 8:
        dispatch.deliveries_dispatch_due(budget_seconds=0.5)
        time.sleep(0.02)
    # delivered inside the noisy receiver's own 12 s timeout, while it still hangs
    assert receiver.ids() == [quiet.id]
    assert Delivery.objects.get(event=quiet).status == "succeeded"
    assert len(hanging.requests) == 1  # one sender held by the noisy receiver, not 40
    worker.join(30)
    noisy = Webhook.objects.get(customer_id="noisy")
    assert noisy.backoff_until is not None and noisy.consecutive_timeouts == 1
    assert Webhook.objects.get(customer_id="quiet").backoff_until is None
    # the rest of the noisy claim was released at once, and nothing else of it was attempted
    assert Delivery.objects.filter(webhook=noisy, claim_token__isnull=False).count() == 0
    assert DeliveryAttempt.objects.filter(delivery__webhook=noisy).count() == 1
    pools.send_pool_close()


@pytest.mark.django_db(transaction=True)
def test_a_customer_holds_at_most_its_share_of_senders(settings, hanging, receiver):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_DISPATCH_THREADS = 6
    settings.WEBHOOK_DISPATCH_PER_CUSTOMER = 2
    settings.WEBHOOK_TIMEOUT_SECONDS = 3.0
    for i in range(5):
        webhook(f"{hanging.url}/{i}", ["*"], name="noisy")
    webhook(receiver.url, ["*"], name="quiet")
    emit(name="noisy")
    quiet = emit(name="quiet")
    worker = _dispatch_in_background(budget_seconds=0.5)
    deadline = time.monotonic() + 8
    while (not receiver.requests or len(hanging.requests) < 2) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert receiver.ids() == [quiet.id]  # delivered while the noisy customer's two senders hang
    # The dispatch starts holders only within its budget and returns once every holder it
    # started has ended (the hanging two at their timeout): whatever it sent has arrived by then.
    worker.join(40)
    assert not worker.is_alive()
    assert len(hanging.requests) == 2  # its share, though five of its webhooks were due
    pools.send_pool_close()


@pytest.mark.django_db
def test_a_bug_of_ours_while_sending_is_not_a_failed_attempt_and_shows_in_metrics(
    api, admin_api, insecure, receiver, settings
):
    settings.WEBHOOK_INTERNAL_ERROR_RETRY_SECONDS = 60
    hook, _ = webhook(receiver.url, ["*"])
    Webhook.objects.filter(pk=hook.pk).update(secret="whsec_not*base64")  # signing raises
    event = emit()
    for _ in range(6):
        dispatch.deliveries_dispatch_due()
    delivery = Delivery.objects.get(event=event)
    assert delivery.status == "pending" and delivery.attempt_count == 0 and delivery.claim_token is None
    assert not delivery.attempts.exists() and not receiver.requests
    hook.refresh_from_db()
    assert hook.status == "enabled"
    assert api.get("/v1/metrics").json()["delivery_internal_errors"] == 1
    assert (
        "trustcal_delivery_internal_errors_total 1.0"
        in admin_api.get("/v1/metrics", HTTP_ACCEPT="text/plain").content.decode()
    )


@pytest.mark.django_db
def test_one_test_in_flight_per_webhook_and_a_small_rate_limit(api, insecure, settings, hanging):
    settings.WEBHOOK_TEST_WAIT_SECONDS = 0.1
    settings.WEBHOOK_TEST_PER_MINUTE = 3
    hooks = [
        api.post("/v1/webhooks", {"url": f"{hanging.url}/{i}", "events": ["*"]}, format="json").json()
        for i in range(5)
    ]
    first = api.post(f"/v1/webhooks/{hooks[0]['webhook_id']}/test")  # no worker: stays pending
    assert first.status_code == 202
    body = first.json()
    assert set(body) == {"delivery_id", "event_id", "success", "response_status", "duration_ms", "error"}
    assert body["success"] is None and body["delivery_id"].startswith("dlv_")
    again = api.post(f"/v1/webhooks/{hooks[0]['webhook_id']}/test")
    assert again.status_code == 409 and again.json()["code"] == "WEBHOOK_TEST_IN_PROGRESS"
    codes = [api.post(f"/v1/webhooks/{h['webhook_id']}/test").status_code for h in hooks[1:4]]
    assert codes == [202, 202, 429]
    limited = api.post(f"/v1/webhooks/{hooks[4]['webhook_id']}/test")
    assert limited.json()["code"] == "WEBHOOK_TEST_RATE_LIMIT" and int(limited["Retry-After"]) >= 1
    history = api.get(f"/v1/webhooks/{hooks[0]['webhook_id']}/deliveries?event_type=webhook.test").json()
    assert (
        history["data"][0]["delivery_id"] == body["delivery_id"] and history["data"][0]["status"] == "pending"
    )


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_concurrent_tests_to_a_never_answering_receiver_leave_health_fast(settings, hanging):
    """8 concurrent test sends to a receiver that never answers, against a real gunicorn with
    4 threads and a real worker: every test answers after its short wait and /health is not
    held behind them. A held web thread would wait for the 60 s send timeout; the bounds below
    are far under that and far over any scheduling delay of a busy machine."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    value = make_key("noisy").value
    env = {
        "WEBHOOK_TIMEOUT_SECONDS": "60",
        "WEBHOOK_TEST_WAIT_SECONDS": "1",
        "WEBHOOK_TEST_PER_MINUTE": "20",
        "WEBHOOK_TEST_THREADS": "8",
        # 8 concurrent calls of one customer on 4 threads: this test is about the send, not the
        # customer's share of the threads (docs/reference/limits.md), so the share is off.
        "TRUSTCAL_THREAD_SHARE": "0",
    }
    with celery_worker("tests", concurrency=2, **env), gunicorn(threads=4, **env) as base:

        def call(method: str, path: str, body: bytes | None = None) -> tuple[int, float]:
            request = urllib.request.Request(
                base + path,
                data=body,
                method=method,
                headers={"Authorization": f"Bearer {value}", "Content-Type": "application/json"},
            )
            started = time.monotonic()
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status, time.monotonic() - started
            except urllib.error.HTTPError as error:
                return error.code, time.monotonic() - started

        import json

        hooks = []
        for i in range(8):
            payload = json.dumps({"url": f"{hanging.url}/{i}", "events": ["*"]}).encode()
            request = urllib.request.Request(
                base + "/v1/webhooks",
                data=payload,
                method="POST",
                headers={"Authorization": f"Bearer {value}", "Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                hooks.append(json.loads(response.read())["webhook_id"])
        with ThreadPoolExecutor(8) as pool:
            tests = [pool.submit(call, "POST", f"/v1/webhooks/{h}/test") for h in hooks]
            time.sleep(0.3)
            health_status, health_seconds = call("GET", "/v1/health")
            results = [f.result() for f in tests]
        # 503 would only mean the worker's first heartbeat is not in yet; either way it answered
        assert health_status in (200, 503) and health_seconds < 20, health_seconds
        assert all(code == 202 and seconds < 20 for code, seconds in results), results
        deadline = time.monotonic() + 15
        while len(hanging.requests) < 8 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(hanging.requests) == 8  # the attempts ran on the worker


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_burst_of_events_queues_one_start_per_webhook_and_every_delivery_arrives_in_order(
    settings, receiver
):
    """With a shared cache, events of a webhook whose start is still queued add no task of their
    own (the queued start claims every due row of the webhook); the deliveries all arrive."""
    from config.redis import get_redis

    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    queue = get_redis()
    queue.delete("celery")
    webhook(receiver.url, ["*"], name="bursty")
    events = [emit(name="bursty", decision_id=f"dec_{i}") for i in range(30)]
    assert queue.llen("celery") == 1
    with celery_worker("burst", beat=True, concurrency=2):
        deadline = time.monotonic() + 60
        while len(receiver.requests) < 30 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert receiver.ids() == [event.id for event in events]
