"""The failed-authentication throttle never refuses a valid key, and counts each client under
its own address, behind trusted proxies too (docs/reference/access.md, "Failed authentications"
and "Client address")."""

import datetime as dt
import time

import pytest
import time_machine
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config.clientaddr import client_address
from keys.services import api_key_revoke
from keys.throttle import RELOAD_SECONDS
from tests.conftest import assert_problem, client_for, make_key

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def mid_minute():
    """The failures are counted in clock minutes: a test must not cross into the next one."""
    with time_machine.travel(dt.datetime(2026, 11, 26, 12, 0, 5, tzinfo=dt.UTC), tick=False):
        yield


GUESS = "tcal_" + "Q" * 39


def _flood(count: int, **meta: str) -> list[int]:
    return [client_for(f"{GUESS}{i % 10}").get("/v1/webhooks", **meta).status_code for i in range(count)]


def test_a_valid_key_works_from_an_address_throttled_for_bad_keys(settings):
    settings.AUTH_FAILURES_PER_MINUTE = 20
    good = make_key("acme").value
    other_tenant = make_key("globex").value
    assert _flood(21) == [401] * 20 + [429]
    assert client_for(good).get("/v1/webhooks").status_code == 200
    assert client_for(other_tenant).get("/v1/webhooks").status_code == 200
    assert_problem(client_for(f"tcal_{'Z' * 40}").get("/v1/webhooks"), 429, "RATE_LIMIT_EXCEEDED")


def test_a_throttled_addresss_unknown_keys_cost_no_query_each(settings):
    settings.AUTH_FAILURES_PER_MINUTE = 3
    make_key("acme")
    _flood(4)  # the fourth read the digests of the keys once
    started = time.monotonic()
    with CaptureQueriesContext(connection) as queries:
        answers = _flood(30)
    elapsed = time.monotonic() - started
    assert answers == [429] * 30
    # at most one read of the digests per RELOAD_SECONDS, however many guesses arrive
    assert len(queries.captured_queries) <= 1 + int(elapsed / RELOAD_SECONDS)
    assert all("digest" in query["sql"] for query in queries.captured_queries)


def test_a_revoked_key_from_a_throttled_address_stays_refused(settings):
    settings.AUTH_FAILURES_PER_MINUTE = 2
    revoked = make_key("acme")
    api_key_revoke(key=revoked.key)
    assert [client_for(revoked.value).get("/v1/webhooks").status_code for _ in range(3)] == [401, 401, 429]


def test_a_key_created_through_the_api_works_at_once_from_a_throttled_address(settings, admin_api):
    settings.AUTH_FAILURES_PER_MINUTE = 2
    _flood(3)
    created = admin_api.post("/v1/admin/api-keys", {"customer_id": "newco", "tier": "pilot"}, format="json")
    assert created.status_code == 201
    assert client_for(created.json()["api_key"]).get("/v1/webhooks").status_code == 200


def test_forwarded_for_is_ignored_without_trusted_proxies(settings):
    settings.AUTH_FAILURES_PER_MINUTE = 2
    settings.TRUSTED_PROXIES = []
    _flood(2, HTTP_X_FORWARDED_FOR="198.51.100.1")
    # a client cannot escape its count by naming another address
    assert _flood(1, HTTP_X_FORWARDED_FOR="198.51.100.2") == [429]


def test_clients_behind_a_trusted_proxy_are_counted_apart(settings):
    settings.AUTH_FAILURES_PER_MINUTE = 2
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    assert _flood(3, HTTP_X_FORWARDED_FOR="198.51.100.1") == [401, 401, 429]
    assert _flood(1, HTTP_X_FORWARDED_FOR="198.51.100.2") == [401]
    # what the client wrote itself (left of the proxy's entry) does not move it
    assert _flood(1, HTTP_X_FORWARDED_FOR="198.51.100.9, 198.51.100.1") == [429]


@pytest.mark.parametrize(
    ("remote", "forwarded", "trusted", "expected"),
    [
        ("203.0.113.5", "198.51.100.1", [], "203.0.113.5"),
        ("203.0.113.5", "198.51.100.1", ["10.0.0.0/8"], "203.0.113.5"),
        ("10.0.0.2", "198.51.100.1", ["10.0.0.0/8"], "198.51.100.1"),
        ("10.0.0.2", "1.2.3.4, 198.51.100.1, 10.0.0.7", ["10.0.0.0/8"], "198.51.100.1"),
        ("10.0.0.2", "10.0.0.9, 10.0.0.7", ["10.0.0.0/8"], "10.0.0.9"),
        ("10.0.0.2", "", ["10.0.0.0/8"], "10.0.0.2"),
        ("10.0.0.2", "not-an-address, 10.0.0.7", ["10.0.0.0/8"], "10.0.0.7"),
        ("10.0.0.2", "[2001:db8::1]:4711", ["10.0.0.0/8"], "2001:db8::1"),
        ("10.0.0.2", "198.51.100.1:4711", ["10.0.0.0/8"], "198.51.100.1"),
        ("::ffff:10.0.0.2", "198.51.100.1", ["10.0.0.2"], "198.51.100.1"),
    ],
)
def test_client_address_is_the_right_most_untrusted_hop(settings, remote, forwarded, trusted, expected):
    settings.TRUSTED_PROXIES = trusted
    assert client_address({"REMOTE_ADDR": remote, "HTTP_X_FORWARDED_FOR": forwarded}) == expected


def test_a_bad_trusted_proxy_entry_is_a_failed_start(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8", "proxy.example"]
    with pytest.raises(ImproperlyConfigured, match=r"proxy\.example"):
        client_address({"REMOTE_ADDR": "10.0.0.1"})
