"""WEBHOOK_ALLOW_INSECURE_URLS admits http and loopback only; WEBHOOK_ALLOWED_NETWORKS admits
named networks, never link-local; the web host and the worker apply the same rules
(docs/reference/webhooks.md, "URL safety")."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.webhooks.helpers import emit, webhook
from webhooks import dispatch, url_safety
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db


def _create(api, url):
    return api.post("/v1/webhooks", {"url": url, "events": ["bias.detected"]}, format="json")


@pytest.mark.parametrize(
    "url",
    [
        "https://192.0.0.8/hook",  # IETF protocol assignment
        "http://169.254.169.254/latest/meta-data",  # link-local: cloud metadata
        "http://[fe80::1]/hook",
        "http://10.1.2.3/hook",  # private
        "http://192.168.0.10/hook",
        "http://100.64.0.1/hook",  # shared address space
        "http://0.0.0.0/hook",  # this network (reaches the local host)
        "http://224.0.0.1/hook",
        "http://[fc00::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",  # IPv4-mapped
        "http://[64:ff9b::a9fe:a9fe]/hook",  # NAT64 of 169.254.169.254
    ],
)
def test_insecure_urls_still_refuse_every_special_address_but_loopback(api, settings, url):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    response = _create(api, url)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "WEBHOOK_INVALID_URL"


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook", "http://127.8.9.10/hook", "http://[::1]/hook"])
def test_insecure_urls_allow_http_and_loopback(api, settings, url):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    assert _create(api, url).status_code == 201


def test_an_allowed_network_is_admitted_and_others_are_not(api, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.20.0.0/16", "fd00:1::/32"]
    assert _create(api, "https://10.20.3.4/hook").status_code == 201
    assert _create(api, "https://[fd00:1::5]/hook").status_code == 201
    assert _create(api, "https://10.21.0.1/hook").json()["code"] == "WEBHOOK_INVALID_URL"
    assert _create(api, "http://10.20.3.4/hook").json()["code"] == "WEBHOOK_INVALID_URL"  # still https only
    assert _create(api, "https://169.254.169.254/hook").json()["code"] == "WEBHOOK_INVALID_URL"


@pytest.mark.parametrize("network", ["169.254.0.0/16", "169.254.169.254", "169.0.0.0/8", "0.0.0.0/0", "fe80::/64", "::/0", "224.0.0.0/4", "not-a-network"])  # fmt: skip
def test_an_allowed_network_that_reaches_link_local_is_a_failed_start(settings, network):
    settings.WEBHOOK_ALLOWED_NETWORKS = [network]
    with pytest.raises(ImproperlyConfigured):
        url_safety.url_rules()


def test_the_worker_applies_the_allowed_networks_too(settings):
    """A webhook admitted while a network was allowed is refused at its next attempt once the
    worker's setting no longer names it; while it does, the attempt goes past the address check."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    hook, _ = webhook("https://127.0.0.1:9/hook", ["*"])
    first = emit()
    dispatch.deliveries_dispatch_due()
    error = Delivery.objects.get(event=first).attempts.get().error
    assert not error.startswith("url_refused"), error  # refused by the closed port instead
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    second = emit()
    Delivery.objects.filter(webhook=hook).exclude(event=second).delete()
    dispatch.deliveries_dispatch_due()
    assert Delivery.objects.get(event=second).attempts.get().error.startswith("url_refused")


def test_the_worker_refuses_link_local_under_insecure_urls(settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    hook, _ = webhook("http://127.0.0.1:9/hook", ["*"])
    hook.url = "http://169.254.169.254/latest/meta-data"  # e.g. stored before this rule existed
    hook.save(update_fields=["url"])
    event = emit()
    dispatch.deliveries_dispatch_due()
    assert Delivery.objects.get(event=event).attempts.get().error.startswith("url_refused")
