"""A client that trickles its request body cannot hold the web threads (docs/reference/
limits.md, "Slow request bodies"): under gunicorn its request answers 408 REQUEST_TIMEOUT at the
body-read deadline, and other clients are served meanwhile."""

import json
import socket
import threading
import time
import urllib.request

import pytest

from tests.conftest import make_key
from tests.processes import gunicorn

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("processes")]


def _trickle(base: str, key: str, answers: list[bytes]) -> None:
    """POST /v1/log with a 56-byte body sent one byte a second."""
    host, port = base.removeprefix("http://").split(":")
    body = json.dumps({"user_id": "slow", "ai_recommendation": "a", "user_decision": "a"}).encode()[:56]
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(
            (
                f"POST /v1/log HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
        )
        answer = b""
        sock.setblocking(False)
        for byte in body:
            try:
                sock.send(bytes([byte]))
            except OSError:
                break
            time.sleep(1)
            try:
                chunk = sock.recv(65536)
            except BlockingIOError:
                continue
            answer += chunk
            if answer:
                break
        sock.setblocking(True)
        while not _complete(answer):  # the head and the body may arrive in separate segments
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        answers.append(answer)


def _complete(answer: bytes) -> bool:
    """Whether `answer` holds a whole response: its head and Content-Length bytes of body."""
    head, found, body = answer.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return True


def test_trickled_bodies_answer_408_and_other_clients_are_served(transactional_db):
    key = make_key("slowpoke", "enterprise").value
    other = make_key("patient", "enterprise").value
    answers: list[bytes] = []
    with gunicorn(threads=2, TRUSTCAL_BODY_READ_SECONDS="3", TRUSTCAL_THREAD_SHARE="0") as base:
        tricklers = [threading.Thread(target=_trickle, args=(base, key, answers)) for _ in range(4)]
        for thread in tricklers:
            thread.start()
        time.sleep(1)  # every web thread is now reading a trickled body
        request = urllib.request.Request(
            base + "/v1/engines/status", headers={"Authorization": f"Bearer {other}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
        for thread in tricklers:
            thread.join(60)
    assert len(answers) == 4
    for answer in answers:
        assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
        assert b'"REQUEST_TIMEOUT"' in answer


def test_a_body_answered_unread_keeps_a_fast_clients_connection(transactional_db):
    """A 401 decided from the headers leaves the body unread: a client that sent it at speed
    gets the 401 and the same keep-alive connection serves its next request."""
    import http.client

    key = make_key("fast", "enterprise").value
    with gunicorn(threads=2, TRUSTCAL_THREAD_SHARE="0") as base:
        host, port = base.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        body = json.dumps(
            {"user_id": "u", "ai_recommendation": "a", "user_decision": "a", "context": "x" * 200_000}
        )
        conn.request(
            "POST",
            "/v1/log",
            body=body,
            headers={"Authorization": "Bearer tcal_wrong", "Content-Type": "application/json"},
        )
        first = conn.getresponse()
        assert first.status == 401
        first.read()
        sock = conn.sock
        conn.request("GET", "/v1/engines/status", headers={"Authorization": f"Bearer {key}"})
        second = conn.getresponse()
        assert second.status == 200
        second.read()
        assert conn.sock is sock, "the connection was closed after the 401"
        conn.close()
