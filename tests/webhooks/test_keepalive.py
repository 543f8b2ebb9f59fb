"""Keep-alive connections to receivers (docs/reference/webhooks.md, "Keep-alive"): reused only for the same webhook and the same
freshly checked address, resent once on a new connection when a kept one was closed before
any byte of the response, and never used for a URL that the check now refuses."""

import socket

import pytest

from tests.webhooks.helpers import emit, webhook
from webhooks import connections, dispatch
from webhooks.models import Delivery, DeliveryAttempt

pytestmark = pytest.mark.django_db


def _dispatch() -> int:
    return dispatch.deliveries_dispatch_due()


def test_consecutive_deliveries_to_one_webhook_reuse_one_connection(threaded, insecure, receiver):
    receiver.keep_alive = True
    webhook(receiver.url, ["*"])
    first = [emit(decision_id=f"dec_{i}") for i in range(5)]
    assert _dispatch() == 5
    later = [emit(decision_id=f"later_{i}") for i in range(3)]  # a claim of its own
    assert _dispatch() == 3
    assert receiver.ids() == [e.id for e in first + later]
    assert receiver.connections == 1
    assert all("connection" not in r.headers for r in receiver.requests)
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}


def test_two_webhooks_on_one_receiver_do_not_share_a_connection(insecure, receiver):
    receiver.keep_alive = True
    webhook(receiver.url + "/a", ["*"])
    webhook(receiver.url + "/b", ["*"])
    for i in range(3):
        emit(decision_id=f"dec_{i}")
    assert _dispatch() == 6
    assert receiver.connections == 2


def test_without_keep_alive_every_delivery_has_its_own_connection(insecure, settings, receiver):
    settings.WEBHOOK_KEEPALIVE_SECONDS = 0
    receiver.keep_alive = True
    webhook(receiver.url, ["*"])
    for i in range(4):
        emit(decision_id=f"dec_{i}")
    assert _dispatch() == 4
    assert receiver.connections == 4
    assert [r.headers["connection"] for r in receiver.requests] == ["close"] * 4


@pytest.mark.parametrize("closing", ["drop_after", "close_silently"])
def test_a_receiver_closing_kept_connections_gets_every_delivery_exactly_once(
    threaded, insecure, receiver, closing
):
    receiver.keep_alive = True
    if closing == "drop_after":
        receiver.drop_after = 2  # reads a connection's second request, closes without answering
    else:
        receiver.close_silently = True  # closes after each response, no `Connection: close`
    webhook(receiver.url, ["*"])
    events = [emit(decision_id=f"dec_{i}") for i in range(6)]
    assert _dispatch() == 6
    assert receiver.ids() == [e.id for e in events]
    assert receiver.connections >= 6
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}
    assert DeliveryAttempt.objects.count() == 6
    assert set(DeliveryAttempt.objects.values_list("error", flat=True)) == {None}


def test_a_url_refused_now_is_not_sent_over_a_live_kept_connection(insecure, receiver):
    receiver.keep_alive = True
    webhook(receiver.url, ["*"])
    emit(decision_id="dec_1")
    assert _dispatch() == 1
    assert connections.pool().idle() == 1  # the connection to 127.0.0.1 is kept
    insecure.WEBHOOK_ALLOW_INSECURE_URLS = False  # now http and loopback are refused
    refused = emit(decision_id="dec_2")
    assert _dispatch() == 1
    assert len(receiver.requests) == 1
    attempt = DeliveryAttempt.objects.get(delivery__event=refused)
    assert attempt.error.startswith("url_refused: The URL must use https")
    assert connections.pool().idle() == 0  # and the kept connection is closed


def test_a_host_now_resolving_elsewhere_gets_a_new_connection_to_the_checked_address(
    insecure, receiver, monkeypatch
):
    """DNS rebinding with a live kept connection: the attempt goes to the new address (here
    127.0.0.2, where nothing listens), not over the connection to the old one."""
    receiver.keep_alive = True
    real = socket.getaddrinfo
    answer = {"address": "127.0.0.1"}

    def resolver(host, port, *args, **kwargs):
        if host == "hooks.example":
            return real(answer["address"], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    webhook(f"http://hooks.example:{receiver.port}/hook", ["*"])
    emit(decision_id="dec_1")
    assert _dispatch() == 1
    assert len(receiver.requests) == 1 and receiver.requests[0].headers["host"].startswith("hooks.example")
    answer["address"] = "127.0.0.2"
    moved = emit(decision_id="dec_2")
    assert _dispatch() == 1
    assert len(receiver.requests) == 1 and receiver.connections == 1
    attempt = DeliveryAttempt.objects.get(delivery__event=moved)
    assert attempt.error.startswith("connection_refused")
