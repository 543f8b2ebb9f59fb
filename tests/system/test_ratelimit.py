"""Tier rate limits and per-customer sliding windows (docs/reference/access.md)."""

import concurrent.futures
import time
import urllib.error
import urllib.request

import pytest
import time_machine

from config.ratelimit import SlidingWindow, TokenBucket
from tests import processes
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db


@time_machine.travel(1_800_000_000, tick=False)  # no refill between the two requests
def test_every_authenticated_response_carries_rate_limit_headers(api):
    response = api.get("/v1/engines/status")
    assert response["X-RateLimit-Limit"] == "1000"
    assert response["X-RateLimit-Remaining"] == "1499"
    assert int(response["X-RateLimit-Reset"]) >= int(time.time())
    error = api.get("/v1/admin/api-keys")  # 403, still authenticated
    assert error["X-RateLimit-Remaining"] == "1498"


@time_machine.travel(1_800_000_000, tick=False)  # no refill while the burst runs
def test_pilot_key_gets_its_burst_then_429_with_retry_after():
    client = client_for(make_key("acme", "pilot").value)
    statuses = [client.get("/v1/engines/status").status_code for _ in range(150)]
    assert statuses == [200] * 150
    denied = client.get("/v1/engines/status")
    assert denied.status_code == 429
    assert denied.json()["code"] == "RATE_LIMIT_EXCEEDED"
    assert int(denied["Retry-After"]) >= 1
    assert denied["X-RateLimit-Remaining"] == "0"
    assert denied["X-RateLimit-Limit"] == "100"


@time_machine.travel(1_800_000_000, tick=False)
def test_each_key_has_its_own_bucket():
    first, second = client_for(make_key("acme", "pilot").value), client_for(make_key("acme", "pilot").value)
    for _ in range(150):
        first.get("/v1/engines/status")
    assert first.get("/v1/engines/status").status_code == 429
    assert second.get("/v1/engines/status").status_code == 200


def test_token_bucket_refills_at_rate_per_minute_over_60():
    bucket = TokenBucket("unit")
    for i in range(150):
        assert bucket.consume("k", per_minute=100, burst=150, now=1000.0).allowed, i
    denied = bucket.consume("k", per_minute=100, burst=150, now=1000.0)
    assert not denied.allowed and denied.retry_after == 1
    # 0.6 s later: 100/60 * 0.6 = 1 token.
    assert bucket.consume("k", per_minute=100, burst=150, now=1000.61).allowed
    assert not bucket.consume("k", per_minute=100, burst=150, now=1000.62).allowed
    full = bucket.consume("k", per_minute=100, burst=150, now=5000.0)
    assert full.remaining == 149


def test_sliding_window_counts_only_accepted_hits_and_says_when_to_retry():
    window = SlidingWindow("unit", limit=3, window_seconds=60)
    assert [window.hit("c", now=100.0 + i).allowed for i in range(3)] == [True, True, True]
    denied = window.hit("c", now=110.0)
    assert not denied.allowed and denied.retry_after == pytest.approx(50.0)
    # Rejected hits did not count: the window frees up exactly when the first hit leaves it.
    assert window.hit("c", now=160.01).allowed
    assert not window.hit("c", now=160.02).allowed
    assert window.hit("other", now=110.0).allowed


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_rate_limit_holds_across_two_server_processes_sharing_redis(transactional_db):
    key = make_key("acme", "pilot").value
    share_off = {"TRUSTCAL_THREAD_SHARE": "0"}  # 16 concurrent calls of one customer: the tier limit alone
    with (
        processes.gunicorn(threads=8, **share_off) as first,
        processes.gunicorn(threads=8, **share_off) as second,
    ):

        def call(i: int) -> tuple[int, str | None]:
            base = first if i % 2 else second
            request = urllib.request.Request(
                base + "/v1/engines/status", headers={"Authorization": f"Bearer {key}"}
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return response.status, None
            except urllib.error.HTTPError as exc:
                return exc.code, exc.headers.get("Retry-After")

        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            results = list(pool.map(call, range(220)))
        elapsed = time.monotonic() - started
    accepted = sum(1 for status, _ in results if status == 200)
    denied = [retry for status, retry in results if status == 429]
    # Exactly the burst, plus at most what the bucket refilled (100/min) while the burst ran.
    refill = int(elapsed * 100 / 60) + 1
    assert 150 <= accepted <= 150 + refill, (accepted, elapsed)
    assert len(denied) == 220 - accepted
    assert all(retry is not None and int(retry) >= 1 for retry in denied)


def test_a_refunded_hit_does_not_count_toward_a_sliding_window():
    """A request that passed the limiter and then failed gives its hit back (rejected requests do not
    count: docs/reference/access.md, Named per-customer limits); works on Redis and in-process alike."""
    window = SlidingWindow("test:refund", limit=2, window_seconds=60)
    window.reset()
    first = window.hit("acme")
    failed = window.hit("acme")
    assert first.allowed and failed.allowed
    assert not window.hit("acme").allowed
    window.refund("acme", failed)
    again = window.hit("acme")
    assert again.allowed and again.count == 2
    assert not window.hit("acme").allowed
    window.refund("acme", window.hit("acme"))  # refunding a refused hit takes nothing back
    assert not window.hit("acme").allowed
    window.reset()
