"""Behind the README's nginx block, with TRUSTCAL_TRUSTED_PROXIES naming nginx, two clients are
throttled apart for bad keys and a valid key is never refused (docs/reference/access.md,
"Failed authentications" and "Client address"). Debian's nginx, started by the test on a free
loopback port; the clients connect from different loopback addresses (127.0.0.2, 127.0.0.3)."""

import http.client
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import make_key
from tests.processes import ROOT, free_port, gunicorn, stop

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("processes")]

GUESS = "tcal_" + "W" * 38
# Seconds of a clock minute the guesses of one test may take, at most (under 2 s at a load of 22).
MINUTE_NEEDED = 40


def _missing(reason: str) -> None:
    """Skip with the reason on a developer's machine; under CI=true the test must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true requires this test to run)", pytrace=False)
    pytest.skip(reason)


def readme_nginx_block(upstream: str) -> str:
    """The README's nginx directives, with proxy_pass pointed at the test's gunicorn."""
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"```nginx\n(.*?)```", readme, re.S)
    assert found, "the README has no nginx block"
    block = found.group(1)
    assert "proxy_pass http://127.0.0.1:8000;" in block
    return block.replace("proxy_pass http://127.0.0.1:8000;", f"proxy_pass {upstream};")


@contextmanager
def nginx(upstream: str, folder: Path, *, http_block: str = "", server_block: str = "") -> Iterator[int]:
    """Debian's nginx on a free port: the README's block proxying to `upstream`, or, with
    `server_block`, that block inside the server (and `http_block`, such as an upstream, beside it)."""
    binary = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")
    if binary is None:
        _missing("nginx not found: apt-get install -y nginx (README, Tests and CI)")
    port = free_port()
    temp = folder / "nginx-temp"
    # Started as root, nginx's workers would run as `nobody`, which cannot reach the test's
    # private folder to buffer request bodies: they run as root here.
    temp.mkdir(mode=0o777, parents=True)
    temp.chmod(0o777)
    conf = folder / "nginx.conf"
    conf.write_text(
        f"""
daemon off;
{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    {http_block}
    server {{
        listen 127.0.0.1:{port};
        {server_block or readme_nginx_block(upstream)}
    }}
}}
"""
    )
    proc = subprocess.Popen([binary, "-c", str(conf), "-p", str(folder)], start_new_session=True)
    try:
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/v1/health")
                break
            except OSError:
                time.sleep(0.1)
        assert proc.poll() is None, (folder / "nginx-error.log").read_text()
        yield port
    finally:
        stop(proc, group=True)


def _status(port: int, source: str, key: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", "/v1/webhooks", headers={"Authorization": f"Bearer {key}"})
        return conn.getresponse().status
    finally:
        conn.close()


@contextmanager
def one_clock_minute() -> Iterator[None]:
    """Failed authentications are counted per clock minute (docs/reference/access.md, "Failed
    authentications"): a run of guesses that crossed into the next minute would start counting
    again. The guesses start early in a minute (waiting for the next one if this one is nearly
    over) and must end inside it, or the test says so instead of reporting a wrong status."""
    if 60 - time.time() % 60 < MINUTE_NEEDED:
        time.sleep(60 - time.time() % 60)
    minute = time.time() // 60
    try:
        yield
    finally:
        assert time.time() // 60 == minute, "the guesses took longer than the rest of their clock minute"


def test_clients_behind_nginx_are_throttled_apart_and_a_valid_key_always_works(transactional_db, tmp_path):
    alice = make_key("alice").value
    bob = make_key("bob").value
    with gunicorn(threads=4, TRUSTCAL_TRUSTED_PROXIES="127.0.0.1") as base, nginx(base, tmp_path) as port:
        with one_clock_minute():
            guesses = [_status(port, "127.0.0.2", f"{GUESS}{i:02d}") for i in range(21)]
            assert guesses == [401] * 20 + [429]
            # the guesser's own address: its valid key works, its next guess does not
            assert _status(port, "127.0.0.2", alice) == 200
            assert _status(port, "127.0.0.2", f"{GUESS}99") == 429
        # another client behind the same nginx is not throttled
        assert _status(port, "127.0.0.3", f"{GUESS}98") == 401
        assert _status(port, "127.0.0.3", bob) == 200


def test_behind_nginx_without_trusted_proxies_a_valid_key_still_works(transactional_db, tmp_path):
    alice = make_key("alice").value
    with gunicorn(threads=4) as base, nginx(base, tmp_path) as port, one_clock_minute():
        assert [_status(port, "127.0.0.2", f"{GUESS}{i:02d}") for i in range(21)] == [401] * 20 + [429]
        # every client shares nginx's address now: unknown keys are refused, valid ones are not
        assert _status(port, "127.0.0.3", f"{GUESS}98") == 429
        assert _status(port, "127.0.0.3", alice) == 200


def _long_get(port: int, length: int) -> tuple[int, str, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", f"/v1/audit-trail?user_id={'u' * length}")
        response = conn.getresponse()
        body = json.loads(response.read())
        assert body["request_id"] == response.getheader("X-Request-ID"), body
        return response.status, response.getheader("Content-Type") or "", body
    finally:
        conn.close()


def test_behind_nginx_a_too_long_url_is_a_problem_document(transactional_db, tmp_path):
    """docs/reference/limits.md, "Request lines and headers": nginx passes request lines up to
    16 KiB, so gunicorn's own 414 (over 8,190 bytes) reaches the client; over 16 KiB nginx
    answers itself, with a problem document as well."""
    with gunicorn(threads=2) as base, nginx(base, tmp_path) as port:
        for length, limit in ((9_000, "8,190 bytes"), (20_000, "16,384 bytes")):
            status, content_type, body = _long_get(port, length)
            assert (status, content_type) == (414, "application/problem+json"), body
            assert body["code"] == "URI_TOO_LONG" and limit in body["detail"]
            assert body["request_id"].startswith("req_")
