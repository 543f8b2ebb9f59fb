"""What gunicorn answers itself, before Django (docs/reference/limits.md, "Request lines and
headers"): a URL whose request line is over 8,190 bytes gets 414 URI_TOO_LONG, too many header
lines 431 HEADERS_TOO_LARGE, a request that is not HTTP 400 MALFORMED_REQUEST: each a problem
document with its request id, never gunicorn's HTML page. A long URL under the limit reaches
the service."""

import json
import socket
import urllib.error
import urllib.request

import pytest

from config.gunicorn_errors import problem_of
from tests.conftest import make_key
from tests.processes import gunicorn

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("processes")]


def _raw(base: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), headers, body


def _assert_problem(answer: tuple[int, dict[str, str], bytes], status: int, code: str) -> dict:
    got, headers, body = answer
    assert got == status, body[:300]
    assert headers["content-type"] == "application/problem+json"
    problem = json.loads(body)
    assert problem["status"] == status and problem["code"] == code and problem["type"] == "about:blank"
    assert problem["request_id"] == headers["x-request-id"] and problem["request_id"].startswith("req_")
    return problem


def test_gunicorns_own_answers_are_problem_documents(transactional_db):
    key = make_key("longurl", "enterprise").value
    with gunicorn(threads=2) as base:
        query = "x" * 9000
        request = f"GET /v1/audit-trail?user_id={query} HTTP/1.1\r\nHost: t\r\n\r\n".encode()
        problem = _assert_problem(_raw(base, request), 414, "URI_TOO_LONG")
        assert "8,190 bytes" in problem["detail"]

        many = "".join(f"X-H{i}: v\r\n" for i in range(150))
        request = f"GET /v1/health HTTP/1.1\r\nHost: t\r\n{many}\r\n".encode()
        _assert_problem(_raw(base, request), 431, "HEADERS_TOO_LARGE")

        problem = _assert_problem(_raw(base, b"NOT HTTP AT ALL\r\n\r\n"), 400, "MALFORMED_REQUEST")
        assert problem["detail"].startswith("The request is not valid HTTP")

        # Under the limit the service answers: 6,000 bytes of query reach the view.
        url = f"{base}/v1/audit-trail?user_id={'y' * 6000}"
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
        try:
            status = urllib.request.urlopen(req, timeout=20).status
        except urllib.error.HTTPError as error:
            status = error.code
            assert error.headers["Content-Type"] == "application/problem+json"
        assert status in (200, 400), status


def test_a_request_gunicorn_cannot_read_is_never_described_as_a_server_error():
    assert (
        problem_of(501, "Not Implemented", "Unsupported transfer coding: 'x'")["code"] == "MALFORMED_REQUEST"
    )
    assert problem_of(500, "Internal Server Error", "boom")["detail"] == "An unexpected error occurred."
    long = problem_of(400, "Bad Request", "Invalid Request Line '" + "z" * 5000 + "'")
    assert len(long["detail"]) < 260
