"""Everything a client sends has a deadline under gunicorn, and before authentication a client
address holds a fixed small number of threads (docs/reference/limits.md, "Slow request lines
and headers", "Web threads"): 40 connections trickling header lines from one address and
trickled console forms from two more leave another customer's requests served, the slow
headers answer 408 at their deadline (or 429 at once over their address's threads), and a late
console form answers 408 as /v1 does, never 500."""

import json
import socket
import threading
import time
import urllib.request

import pytest

from tests.conftest import make_key
from tests.processes import gunicorn


def _connect(port: int, source: str, first: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
    sock.sendall(first)
    return sock


def _slow_headers(port: int, source: str) -> socket.socket:
    return _connect(port, source, b"GET /v1/health HTTP/1.1\r\n")


def _slow_form(port: int, source: str) -> socket.socket:
    """A console sign-in form with a CSRF cookie (the CSRF check reads the form) that declares
    1,000 bytes and has sent one."""
    return _connect(
        port,
        source,
        b"POST /admin/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: csrftoken=" + b"c" * 32 + b"\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nu",
    )


def _trickle(headers: list[socket.socket], forms: list[socket.socket], stop: threading.Event) -> None:
    while not stop.wait(1.0):
        for sock, piece in [(s, b"X-Slow: 1\r\n") for s in headers] + [(s, b" ") for s in forms]:
            try:
                sock.send(piece)
            except OSError:
                continue


def _get(base: str, path: str, key: str) -> tuple[int, float]:
    started = time.monotonic()
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            status = answer.status
    except urllib.error.HTTPError as error:
        status = error.code
    return status, time.monotonic() - started


def _answer(sock: socket.socket, wait: float) -> bytes:
    """Everything the server wrote until it closed the connection (or `wait` passed)."""
    sock.settimeout(wait)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except OSError:
        pass
    return out


def _problem(answer: bytes) -> dict:
    head, _, body = answer.partition(b"\r\n\r\n")
    if b"chunked" in head.lower():
        size, _, rest = body.partition(b"\r\n")
        body = rest[: int(size, 16)]
    return json.loads(body)


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_slow_headers_and_slow_console_forms_from_three_addresses_leave_another_customer_served(
    transactional_db,
):
    patient = make_key("patient", "enterprise").value
    stop = threading.Event()
    with gunicorn(threads=8) as base:  # the deadlines as shipped: 10 s for headers and bodies
        port = int(base.rsplit(":", 1)[1])
        _get(base, "/v1/health", patient)  # the first request loads the rest of the app
        headers = [_slow_headers(port, "127.0.0.2") for _ in range(40)]
        forms = [_slow_form(port, "127.0.0.3") for _ in range(10)] + [
            _slow_form(port, "127.0.0.4") for _ in range(10)
        ]
        trickler = threading.Thread(target=_trickle, args=(headers, forms, stop), daemon=True)
        trickler.start()
        try:
            time.sleep(2)  # every connection has been taken by a thread or refused by now
            served = [_get(base, "/v1/webhooks", patient) for _ in range(20)]
            started = time.monotonic()
            header_answers = [_answer(sock, 15) for sock in headers]
            form_answers = [_answer(sock, 15) for sock in forms]
            waited = time.monotonic() - started
        finally:
            stop.set()
            for sock in headers + forms:
                sock.close()
    # another customer is served throughout, each request long before any deadline
    assert [status for status, _ in served] == [200] * 20
    assert max(seconds for _, seconds in served) < 5.0, served
    # an address holds 2 of 8 threads (a quarter) before authentication: 38 slow-header
    # connections were refused at once, 2 answered 408 at their deadline; nothing hangs on
    assert waited < 30
    statuses = [answer[:12] for answer in header_answers]
    assert statuses.count(b"HTTP/1.1 429") == 38 and statuses.count(b"HTTP/1.1 408") == 2, statuses
    for answer in header_answers:
        assert _problem(answer)["code"] in ("RATE_LIMIT_EXCEEDED", "REQUEST_TIMEOUT")
    # console forms: 2 per address read until their body deadline, then 408 as /v1 answers
    statuses = [answer[:12] for answer in form_answers]
    assert statuses.count(b"HTTP/1.1 408") == 4 and statuses.count(b"HTTP/1.1 429") == 16, statuses
    for answer in form_answers:
        if answer.startswith(b"HTTP/1.1 408"):
            assert _problem(answer)["code"] == "REQUEST_TIMEOUT"


@pytest.mark.xdist_group("processes")
def test_a_request_line_trickled_past_its_deadline_answers_408(transactional_db):
    with gunicorn(threads=4, TRUSTCAL_HEADER_READ_SECONDS="2") as base:
        port = int(base.rsplit(":", 1)[1])
        sock = _connect(port, "127.0.0.1", b"GET /v1/hea")
        started = time.monotonic()
        for piece in (b"lth HTTP/1.1\r\n", b"Host: x\r\n", b"X-A: 1\r\n", b"X-B: 1\r\n"):
            time.sleep(0.8)
            try:
                sock.send(piece)
            except OSError:
                break
        answer = _answer(sock, 10)
        elapsed = time.monotonic() - started
        sock.close()
        # a request whose headers came at once is served as before, keep-alive included
        assert urllib.request.urlopen(base + "/v1/health", timeout=10).status == 200
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert _problem(answer)["code"] == "REQUEST_TIMEOUT"
    assert 1.5 < elapsed < 8, elapsed
