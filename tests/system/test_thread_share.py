"""One customer (and, before authentication, one client address) holds at most a share of a
web process's threads; beyond it 429 at once, so slow bodies from one customer never delay
another's requests (docs/reference/limits.md, "Web threads")."""

import socket
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest
from django.http import HttpRequest

from config.threadshare import thread_share
from tests.conftest import assert_problem, client_for, make_key
from tests.processes import gunicorn


@pytest.fixture
def four_threads(settings) -> Iterator[None]:
    settings.THREAD_SHARE = 0.5
    before = thread_share.threads
    thread_share.threads = 4  # as gunicorn.conf.py sets it in a web worker: the share is 2
    yield
    thread_share.threads = before
    thread_share.reset()


def _hold(subject: str, count: int) -> list[HttpRequest]:
    held = [HttpRequest() for _ in range(count)]
    for request in held:
        assert thread_share.take(request, subject)
    return held


@pytest.mark.django_db
def test_a_customer_over_its_share_gets_429_at_once_and_others_are_served(four_threads):
    acme, globex = make_key("acme").value, make_key("globex").value
    held = _hold("customer:acme", 2)
    refused = client_for(acme).get("/v1/webhooks")
    assert_problem(refused, 429, "RATE_LIMIT_EXCEEDED")
    assert refused["Retry-After"] == "1" and "share of the web threads" in refused.json()["detail"]
    assert client_for(globex).get("/v1/webhooks").status_code == 200
    for request in held:
        thread_share.give_back(request)
    assert client_for(acme).get("/v1/webhooks").status_code == 200
    assert thread_share.held("customer:acme") == 0 and thread_share.held("addr:127.0.0.1") == 0


def _slow_batch(port: int, key: str) -> socket.socket:
    """A POST /v1/log/batch that declares 8 MiB and has sent one byte of it."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(
        (
            f"POST /v1/log/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {8 * 1024 * 1024}\r\n\r\n{{"
        ).encode()
    )
    return sock


def _slow_sign_in(port: int, source: str) -> socket.socket:
    """A console sign-in form (no API key: nothing authenticates before its body is read) that
    declares 1,000 bytes and has sent one. With a CSRF cookie, the CSRF check reads the form."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
    sock.sendall(
        b"POST /admin/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: csrftoken=" + b"c" * 32 + b"\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nu"
    )
    return sock


def _trickle(socks: list[socket.socket], stop: threading.Event) -> None:
    while not stop.wait(1.0):
        for sock in socks:
            try:
                sock.send(b" ")
            except OSError:
                continue


def _get(base: str, path: str, key: str | None) -> tuple[int, float]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.monotonic()
    try:
        with urllib.request.urlopen(
            urllib.request.Request(base + path, headers=headers), timeout=60
        ) as answer:
            status = answer.status
    except urllib.error.HTTPError as error:
        status = error.code
    return status, time.monotonic() - started


def _answer(sock: socket.socket, wait: float) -> bytes:
    sock.settimeout(wait)
    try:
        return sock.recv(65536)
    except OSError:
        return b""


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_forty_slow_batches_of_one_customer_do_not_delay_another_customers_get(transactional_db):
    hostile = make_key("hostile", "enterprise").value
    patient = make_key("patient", "enterprise").value
    stop = threading.Event()
    with gunicorn(threads=8, TRUSTCAL_BODY_READ_MIN_BYTES_PER_SECOND=str(512 * 1024)) as base:
        port = int(base.rsplit(":", 1)[1])
        _get(base, "/v1/health", None)  # the first request loads the rest of the app
        socks = [_slow_batch(port, hostile) for _ in range(40)]
        trickler = threading.Thread(target=_trickle, args=(socks, stop), daemon=True)
        trickler.start()
        try:
            time.sleep(2)  # every connection has been taken by a thread or refused by now
            timings = [_get(base, "/v1/webhooks", patient) for _ in range(10)]
            health = _get(base, "/v1/health", None)
            answers = [_answer(sock, 0.5) for sock in socks]
        finally:
            stop.set()
            for sock in socks:
                sock.close()
    assert [status for status, _ in timings] == [200] * 10
    assert max(seconds for _, seconds in timings) < 2.0, timings  # not the 16 s body deadline
    assert health[0] == 200 and health[1] < 2.0
    refused = [answer for answer in answers if answer.startswith(b"HTTP/1.1 429")]
    # the share of 8 threads is 4: the other 36 were refused at once, their bodies unread
    assert len(refused) == 36, [answer[:12] for answer in answers]
    assert all(b"share of the web threads" in answer for answer in refused)


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_slow_bodies_before_authentication_hold_only_their_addresss_threads(transactional_db):
    stop = threading.Event()
    with gunicorn(threads=8, TRUSTCAL_BODY_READ_SECONDS="30") as base:
        port = int(base.rsplit(":", 1)[1])
        _get(base, "/v1/health", None)  # the first request loads the rest of the app
        socks = [_slow_sign_in(port, "127.0.0.2") for _ in range(6)]
        trickler = threading.Thread(target=_trickle, args=(socks, stop), daemon=True)
        trickler.start()
        try:
            time.sleep(2)
            other = _slow_sign_in(port, "127.0.0.3")  # another address still has its share
            socks.append(other)
            health = _get(base, "/v1/health", None)  # a request that never waits on its client
            answers = [_answer(sock, 0.5) for sock in socks]
        finally:
            stop.set()
            for sock in socks:
                sock.close()
    assert health[0] == 200 and health[1] < 2.0
    # an address holds a fixed number of threads before authentication: 2 of 8 (a quarter)
    assert sum(answer.startswith(b"HTTP/1.1 429") for answer in answers[:6]) == 4, answers
    assert answers[6] == b""  # still being read, not refused
