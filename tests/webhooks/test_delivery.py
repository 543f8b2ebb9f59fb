"""Delivery behaviour against real loopback receivers: signing, rotation, the exact retry
schedule, disable/enable, failure reasons, ordering and leases (docs/reference/webhooks.md)."""

import datetime as dt
import json

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from tests.webhooks.helpers import emit, webhook
from tests.webhooks.receiver import HANG, RESET
from webhooks import dispatch, holder, outcomes, pools, services
from webhooks.models import Delivery, DeliveryAttempt, Webhook

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2026, 11, 21, 10, 0, 0, tzinfo=dt.UTC)


def _dispatch() -> int:
    return dispatch.deliveries_dispatch_due()


def test_every_delivery_verifies_with_standardwebhooks_and_carries_the_c9_envelope(insecure, receiver):
    _hook, secret = webhook(receiver.url, ["*"])
    events = [emit("bias.detected"), emit("trust.miscalibrated", user_id="u1"), emit("model.bias.ingested")]
    assert _dispatch() == 3
    assert len(receiver.requests) == 3
    for event, request in zip(events, receiver.requests, strict=True):
        body = Verifier(secret).verify(request.body, request.headers)
        assert request.headers["webhook-id"] == event.id
        assert request.headers["webhook-signature"].startswith("v1,")
        assert set(body) == {
            "id",
            "type",
            "created_at",
            "api_version",
            "idempotency_key",
            "customer_id",
            "data",
        }
        assert body["id"] == body["idempotency_key"] == event.id
        assert body["type"] == event.type and body["api_version"] == "1.0.0" and body["customer_id"] == "acme"
        assert body["created_at"].endswith("Z")
    assert json.loads(receiver.requests[0].body)["data"]["regulation"] == "EU AI Act Art. 10"
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}


def test_fan_out_one_row_per_subscribed_webhook_and_skipped_for_disabled(insecure, receiver):
    subscribed, _ = webhook(receiver.url + "/1", ["bias.detected"])
    star, _ = webhook(receiver.url + "/2", ["*"])
    webhook(receiver.url + "/3", ["trust.miscalibrated"])  # not subscribed
    disabled, _ = webhook(receiver.url + "/4", ["bias.detected"])
    Webhook.objects.filter(pk=disabled.pk).update(status="disabled")
    webhook(receiver.url, ["*"], name="globex")  # another customer
    event = emit("bias.detected")
    rows = {d.webhook_id: d.status for d in Delivery.objects.filter(event=event)}
    assert rows == {subscribed.id: "pending", star.id: "pending", disabled.id: "skipped"}


def test_rotation_signs_with_both_secrets_during_grace_then_only_the_new(insecure, receiver):
    hook, old = webhook(receiver.url, ["*"])
    with time_machine.travel(T0, tick=False):
        new = services.webhook_secret_rotate(webhook=hook).secret
        emit()
        _dispatch()
        request = receiver.requests[-1]
        assert len(request.headers["webhook-signature"].split(" ")) == 2
        assert request.headers["webhook-signature"].split(" ")[0] == services.signing.signature(
            secret=new,
            msg_id=request.headers["webhook-id"],
            timestamp=int(request.headers["webhook-timestamp"]),
            body=request.body,
        )
        Verifier(old).verify(request.body, request.headers)
        Verifier(new).verify(request.body, request.headers)
    with time_machine.travel(T0 + dt.timedelta(hours=24, seconds=1), tick=False):
        emit()
        _dispatch()
        request = receiver.requests[-1]
        assert len(request.headers["webhook-signature"].split(" ")) == 1
        Verifier(new).verify(request.body, request.headers)
        with pytest.raises(WebhookVerificationError):
            Verifier(old).verify(request.body, request.headers)


def test_schedule_is_0_1m_5m_30m_2h_then_disabled_skipped_and_enable_resumes(api, insecure, receiver):
    receiver.always(500, b"nope")
    hook, _ = webhook(receiver.url, ["*"])
    with time_machine.travel(T0, tick=False):
        event = emit()
        assert _dispatch() == 1
    expected = [T0]
    for delay in (60, 300, 1800, 7200):
        due = expected[-1] + dt.timedelta(seconds=delay)
        with time_machine.travel(due - dt.timedelta(seconds=1), tick=False):
            assert _dispatch() == 0  # not a second early
        with time_machine.travel(due, tick=False):
            assert _dispatch() == 1
        expected.append(due)
    delivery = Delivery.objects.get(event=event)
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("attempt"))
    assert [a.attempted_at for a in attempts] == expected
    assert [a.attempt for a in attempts] == [1, 2, 3, 4, 5]
    assert [dt.datetime.fromtimestamp(r.at, dt.UTC) for r in receiver.requests] == expected
    assert all(a.response_status == 500 and a.error == "http_status: 500" for a in attempts)
    assert attempts[0].response_body == "nope"
    assert delivery.status == "failed" and delivery.attempt_count == 5 and delivery.next_attempt_at is None

    body = api.get(f"/v1/webhooks/{hook.id}").json()
    assert body["status"] == "disabled" and body["disabled_reason"] == "delivery_failures"
    assert body["disabled_at"] is not None

    later = emit()
    assert Delivery.objects.get(event=later).status == "skipped"
    with time_machine.travel(T0 + dt.timedelta(days=1), tick=False):
        assert _dispatch() == 0

    receiver.always(200)
    response = api.post(f"/v1/webhooks/{hook.id}/enable")
    assert response.status_code == 200 and response.json()["status"] == "enabled"
    assert response.json()["disabled_reason"] is None
    resumed = emit()
    assert _dispatch() == 1
    assert Delivery.objects.get(event=resumed).status == "succeeded"
    assert receiver.requests[-1].headers["webhook-id"] == resumed.id


def test_a_receiver_hanging_past_the_timeout_is_a_failure_with_the_reason(insecure, settings, receiver):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    receiver.behaviour = lambda req: HANG
    receiver.hang_seconds = 1.0
    webhook(receiver.url, ["*"])
    event = emit()
    _dispatch()
    delivery = Delivery.objects.get(event=event)
    attempt = delivery.attempts.get()
    assert delivery.status == "pending" and delivery.attempt_count == 1
    assert attempt.error.startswith("timeout") and attempt.response_status is None
    assert 250 <= attempt.duration_ms < 1000
    # one minute after the failure (which came ~0.3 s after the attempt started)
    assert abs((delivery.next_attempt_at - attempt.attempted_at) - dt.timedelta(seconds=60)) < dt.timedelta(
        seconds=2
    )


def test_a_301_is_a_failure_and_the_redirect_is_not_followed(insecure, receiver):
    receiver.always(301, b"moved")
    receiver.extra_headers = {"Location": "http://127.0.0.1:1/elsewhere"}
    webhook(receiver.url, ["*"])
    event = emit()
    _dispatch()
    attempt = Delivery.objects.get(event=event).attempts.get()
    assert attempt.response_status == 301 and "redirect 301 not followed" in attempt.error
    assert len(receiver.requests) == 1


def test_a_connection_reset_is_a_failure_with_the_reason(insecure, receiver):
    receiver.behaviour = lambda req: RESET
    webhook(receiver.url, ["*"])
    event = emit()
    _dispatch()
    delivery = Delivery.objects.get(event=event)
    attempt = delivery.attempts.get()
    assert delivery.status == "pending" and attempt.response_status is None
    assert attempt.error.startswith(("connection_reset", "connection_closed"))


def test_a_refused_connection_and_an_unresolvable_host_are_failures(insecure):
    Webhook.objects.all().delete()
    hook, _ = webhook("http://127.0.0.1:1/nothing-listens", ["*"])
    event = emit()
    _dispatch()
    assert Delivery.objects.get(event=event).attempts.get().error.startswith("connection_refused")
    Webhook.objects.filter(pk=hook.pk).update(url="http://no-such-host.invalid/hook")
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=2)):
        _dispatch()
    assert "does not resolve" in Delivery.objects.get(event=event).attempts.order_by("attempt").last().error


def test_the_address_rule_is_checked_again_before_every_attempt(settings, receiver):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    webhook(receiver.url, ["*"])
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False  # e.g. the name now resolves to loopback
    event = emit()
    _dispatch()
    attempt = Delivery.objects.get(event=event).attempts.get()
    assert attempt.error.startswith("url_refused") and not receiver.requests


def test_first_attempts_start_in_event_order_per_webhook(threaded, insecure, receiver):
    webhook(receiver.url, ["*"])
    events = [emit() for _ in range(5)]
    # make the later event due first: the claim must still not start it before the earlier one
    first, second = (Delivery.objects.get(event=e) for e in events[:2])
    Delivery.objects.filter(pk=first.pk).update(
        next_attempt_at=second.next_attempt_at + dt.timedelta(milliseconds=1)
    )
    claim = dispatch.deliveries_claim(limit=1)
    assert (
        claim.deliveries == [] and claim.held_back
    )  # only `second` was a candidate; `first` had not started
    assert _dispatch() == 5
    assert receiver.ids() == [e.id for e in events]


def test_a_retrying_delivery_does_not_hold_back_later_events(insecure, receiver):
    receiver.behaviour = lambda req: (500, b"") if len(receiver.requests) == 1 else (200, b"")
    webhook(receiver.url, ["*"])
    first = emit()
    _dispatch()
    second = emit()
    _dispatch()
    assert Delivery.objects.get(event=second).status == "succeeded"
    assert Delivery.objects.get(event=first).status == "pending"


def test_an_expired_lease_is_claimed_again_and_the_stale_holder_cannot_write(
    threaded, insecure, settings, receiver
):
    settings.WEBHOOK_LEASE_SECONDS = 30
    webhook(receiver.url, ["*"])
    event = emit()
    stale_token, claimed, _ = dispatch.deliveries_claim(limit=10)
    assert len(claimed) == 1
    assert dispatch.deliveries_claim(limit=10).deliveries == []  # leased: nobody else gets it
    with time_machine.travel(timezone.now() + dt.timedelta(seconds=31)):
        token, again, _ = dispatch.deliveries_claim(limit=10)
        assert [d.pk for d in again] == [claimed[0].pk]
        assert holder.delivery_attempt(delivery=claimed[0], token=stale_token) is None  # fenced off
        assert holder.delivery_attempt(delivery=again[0], token=token) is True
    delivery = Delivery.objects.get(event=event)
    assert delivery.status == "succeeded" and delivery.attempt_count == 1 and len(receiver.requests) == 1


def test_retry_now_makes_a_failed_delivery_due_again(insecure, receiver):
    receiver.always(500)
    _hook, _ = webhook(receiver.url, ["*"])
    event = emit()
    delivery = Delivery.objects.get(event=event)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", attempt_count=5, next_attempt_at=None)
    receiver.always(200)
    services.delivery_retry_now(delivery=delivery)
    assert _dispatch() == 1
    delivery.refresh_from_db()
    assert delivery.status == "succeeded" and delivery.attempt_count == 6


def test_retrying_an_old_skipped_delivery_keeps_its_place_in_event_order(threaded, insecure, receiver):
    hook, _ = webhook(receiver.url, ["*"])
    Webhook.objects.filter(pk=hook.pk).update(status="disabled")
    old = emit()
    Webhook.objects.filter(pk=hook.pk).update(status="enabled")
    newer = [emit() for _ in range(3)]
    services.delivery_retry_now(delivery=Delivery.objects.get(event=old))
    claim = dispatch.deliveries_claim(limit=2)
    assert [d.event_id for d in claim.deliveries] == [old.id, newer[0].id]
    for delivery in claim.deliveries:
        holder.delivery_attempt(delivery=delivery, token=claim.token)
    assert _dispatch() == 2
    assert receiver.ids() == [old.id] + [e.id for e in newer]


def test_deliveries_created_in_the_same_microsecond_are_claimed_in_id_order_without_stalling(
    threaded, insecure, receiver
):
    webhook(receiver.url, ["*"])
    with time_machine.travel(T0, tick=False):
        for _ in range(4):
            emit()
        in_order = list(Delivery.objects.order_by("id").values_list("id", flat=True))
        first = dispatch.deliveries_claim(limit=2)
        # one holder per webhook: nobody else claims its later rows while it is sending
        assert dispatch.deliveries_claim(limit=2).deliveries == []
        for delivery in first.deliveries:
            holder.delivery_attempt(delivery=delivery, token=first.token)
        second = dispatch.deliveries_claim(limit=2)
    assert [d.id for d in first.deliveries] == in_order[:2]
    assert [d.id for d in second.deliveries] == in_order[2:]


def test_several_webhooks_are_sent_in_parallel_threads_each_in_event_order(
    transactional_db, settings, receiver
):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_DISPATCH_THREADS = 3
    hooks = [webhook(f"{receiver.url}/{i}", ["*"])[0] for i in range(3)]
    events = [emit() for _ in range(5)]
    try:
        assert dispatch.deliveries_dispatch_due() == 15
    finally:
        pools.send_pool_close()
    for i, _hook in enumerate(hooks):
        got = [r.headers["webhook-id"] for r in receiver.requests if r.path == f"/hook/{i}"]
        assert got == [e.id for e in events]
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}


def test_a_backlog_of_one_webhook_arrives_once_each_in_event_order_while_holders_claim_ahead(
    threaded, insecure, receiver
):
    """Small claims, so the holder claims ahead many times while sending: every delivery
    arrives exactly once, in event order, with one attempt recorded each."""
    threaded.WEBHOOK_DISPATCH_PER_WEBHOOK = 7
    threaded.WEBHOOK_OUTCOME_BATCH = 3
    receiver.keep_alive = True
    webhook(receiver.url, ["*"])
    events = services.events_emit(
        customer=Webhook.objects.get().customer,
        events=[("bias.detected", {"decision_id": f"dec_{i}"}) for i in range(120)],
    )
    assert _dispatch() == 120
    assert receiver.ids() == [e.id for e in events]
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}
    assert DeliveryAttempt.objects.count() == 120
    assert not Delivery.objects.filter(claim_token__isnull=False).exists()


def test_a_stale_holder_can_neither_back_off_nor_recover_the_webhook(threaded, insecure, settings, receiver):
    """Back-off and recovery are fenced like outcomes: once another holder has taken the
    deliveries over (the first one's lease ran out), the first one's writes are dropped."""
    settings.WEBHOOK_LEASE_SECONDS = 30
    hook, _ = webhook(receiver.url, ["*"])
    emit()
    stale = dispatch.deliveries_claim(limit=10)
    delivery = stale.deliveries[0]
    with time_machine.travel(timezone.now() + dt.timedelta(seconds=31)):
        fresh = dispatch.deliveries_claim(limit=10)
        assert [d.pk for d in fresh.deliveries] == [delivery.pk]
        assert outcomes.back_off(hook, token=stale.token, delivery_id=delivery.pk) is False
        hook.refresh_from_db()
        assert hook.backoff_until is None and hook.consecutive_timeouts == 0
        assert outcomes.back_off(hook, token=fresh.token, delivery_id=delivery.pk) is True
        hook.refresh_from_db()
        assert hook.backoff_until is not None and hook.consecutive_timeouts == 1
        assert outcomes.recovered(hook, token=stale.token, delivery_id=delivery.pk) is False
        hook.refresh_from_db()
        assert hook.consecutive_timeouts == 1
        assert outcomes.recovered(hook, token=fresh.token, delivery_id=delivery.pk) is True
        hook.refresh_from_db()
        assert hook.backoff_until is None and hook.consecutive_timeouts == 0
