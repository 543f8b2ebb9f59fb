"""Limits that keep one customer from degrading the others: webhooks per customer, duplicate
URLs, and the URL check's transition ranges and port 0 (docs/reference/limits.md,
"Webhook URLs")."""

import threading

import pytest
from django.db import connection

from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db


def _create(api, url):
    return api.post("/v1/webhooks", {"url": url, "events": ["*"]}, format="json")


def test_a_customer_may_have_at_most_the_configured_number_of_webhooks(api, other_api, insecure, settings):
    settings.WEBHOOK_MAX_PER_CUSTOMER = 3
    codes = [_create(api, f"http://127.0.0.1:9/h{i}").status_code for i in range(4)]
    assert codes == [201, 201, 201, 409]
    refused = _create(api, "http://127.0.0.1:9/h9").json()
    assert refused["code"] == "WEBHOOK_LIMIT_REACHED"
    assert _create(other_api, "http://127.0.0.1:9/h0").status_code == 201  # per customer


def test_the_same_url_twice_is_refused_on_create_and_on_update(api, insecure):
    first = _create(api, "http://127.0.0.1:9/same")
    assert first.status_code == 201
    again = _create(api, "http://127.0.0.1:9/same")
    assert again.status_code == 409 and again.json()["code"] == "WEBHOOK_DUPLICATE_URL"
    other = _create(api, "http://127.0.0.1:9/other").json()["webhook_id"]
    moved = api.patch(f"/v1/webhooks/{other}", {"url": "http://127.0.0.1:9/same"}, format="json")
    assert moved.status_code == 409
    same = api.patch(
        f"/v1/webhooks/{first.json()['webhook_id']}", {"url": "http://127.0.0.1:9/same"}, format="json"
    )
    assert same.status_code == 200


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_never_pass_the_limit(insecure, settings):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite serialises writers; the race needs concurrent transactions")
    settings.WEBHOOK_MAX_PER_CUSTOMER = 5
    value = make_key("racer").value
    codes: list[int] = []

    def create(i: int) -> None:
        codes.append(_create(client_for(value), f"http://127.0.0.1:9/r{i}").status_code)
        connection.close()

    threads = [threading.Thread(target=create, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes.count(201) == 5 and codes.count(409) == 7


@pytest.mark.parametrize(
    "url",
    [
        "https://[2002:7f00:1::]/hook",  # 6to4 embedding 127.0.0.1
        "https://[2002:a00:1::]/hook",  # 6to4 embedding 10.0.0.1
        "https://[2002:808:808::]/hook",  # 6to4, even embedding a public address
        "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",  # Teredo
        "https://93.184.216.34:0/hook",  # port 0
    ],
)
def test_transition_ranges_and_port_zero_are_refused(api, settings, url):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    response = _create(api, url)
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "WEBHOOK_INVALID_URL"


@pytest.mark.parametrize(
    "url",
    [
        "https://192.0.0.8/hook",  # IETF protocol assignments (192.0.0.0/24)
        "https://192.0.0.170/hook",
        "https://100.64.0.1/hook",  # shared address space
        "https://198.18.0.1/hook",  # benchmarking
        "https://192.88.99.1/hook",  # 6to4 relay anycast
        "https://[64:ff9b::a00:1]/hook",  # NAT64 of 10.0.0.1
        "https://[64:ff9b:1::1]/hook",  # local-use translation
        "https://[::ffff:808:808]/hook",  # IPv4-mapped
        "https://[3fff::1]/hook",  # documentation (2024)
        "https://[5f00::1]/hook",  # segment routing
        "https://[2001:db8::1]/hook",
    ],
)
def test_every_address_not_globally_reachable_is_refused(api, settings, url):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    response = _create(api, url)
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "WEBHOOK_INVALID_URL"


@pytest.mark.parametrize("url", ["https://192.0.0.9/hook", "https://192.0.0.10/hook", "https://8.8.8.8/hook"])
def test_globally_reachable_exceptions_are_accepted(api, settings, url):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    response = _create(api, url)
    assert response.status_code == 201, response.json()
