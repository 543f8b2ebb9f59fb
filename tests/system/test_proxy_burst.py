"""A customer over its share of the web threads never looks like a dead host (docs/deploy.md,
"The load balancer"): behind the guide's own nginx upstream block (two web hosts, max_fails=3
fail_timeout=10s), one customer bursts request bodies over its share and gets 429s, while
another customer, at the same time and for the 10 s after, never gets a 502."""

import http.client
import json
import re
import threading
import time
from collections import Counter

import pytest

from tests.audit.factories import decision_body
from tests.conftest import make_key
from tests.processes import ROOT, gunicorn
from tests.system.test_front_proxy import nginx

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("processes")]


def guide_nginx_block(upstreams: list[str]) -> str:
    """docs/deploy.md's upstream block with the test's web hosts, and its `location /`."""
    guide = (ROOT / "docs" / "deploy.md").read_text()
    upstream = re.search(r"(upstream trustcal \{.*?\n\})", guide, re.S)
    location = re.search(r"\n    (location / \{.*?\n    \})", guide, re.S)
    assert upstream and location, "docs/deploy.md has no upstream block or location /"
    servers = re.findall(r"\n    server [^\n]*", upstream.group(1))
    assert len(servers) == 2 and all("max_fails=3 fail_timeout=10s" in line for line in servers)
    block = upstream.group(1)
    for line, address in zip(servers, upstreams, strict=True):
        block = block.replace(line, re.sub(r"server \S+", f"server {address}", line, count=1))
    return block + "\n"


def _send(port: int, key: str, method: str, path: str, body: bytes | None = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_a_customer_bursting_over_its_share_behind_nginx_causes_no_502_for_another(
    transactional_db, tmp_path
):
    burster, bystander = make_key("burst").value, make_key("calm").value
    batch = json.dumps({"decisions": [decision_body() for _ in range(200)]}).encode()
    # Two threads a host, a share of one thread per customer: a burst is mostly refused.
    share = {
        "TRUSTCAL_THREAD_SHARE": "0.5",
        "TRUSTCAL_TRUSTED_PROXIES": "127.0.0.1",
        "TRUSTCAL_RATE_LIMITS_ENABLED": "false",
    }
    with gunicorn(threads=2, **share) as web1, gunicorn(threads=2, **share) as web2:
        upstreams = [web1.removeprefix("http://"), web2.removeprefix("http://")]
        location = re.search(
            r"\n    (location / \{.*?\n    \})", (ROOT / "docs" / "deploy.md").read_text(), re.S
        )
        assert location is not None
        server = location.group(1)
        with nginx(
            "http://trustcal", tmp_path, http_block=guide_nginx_block(upstreams), server_block=server
        ) as port:
            burst: Counter[int] = Counter()
            calm: Counter[int] = Counter()
            stop = threading.Event()

            def burst_client() -> None:
                while not stop.is_set():
                    burst[_send(port, burster, "POST", "/v1/log/batch", batch)] += 1

            def calm_client() -> None:
                while not stop.is_set():
                    calm[_send(port, bystander, "GET", "/v1/audit-trail?limit=1")] += 1
                    time.sleep(0.05)

            threads = [threading.Thread(target=burst_client) for _ in range(8)]
            threads.append(threading.Thread(target=calm_client))
            for thread in threads:
                thread.start()
            time.sleep(8)
            stop.set()
            for thread in threads:
                thread.join(timeout=120)
            # nginx would keep a host it marked failed out for fail_timeout (10 s): look again.
            after = Counter(_send(port, bystander, "GET", "/v1/audit-trail?limit=1") for _ in range(20))
        error_log = (tmp_path / "nginx-error.log").read_text()

    assert burst[429] > 0, (burst, error_log[-2000:])  # the burst was over its share
    assert set(burst) <= {200, 201, 207, 429}, burst
    assert calm[502] == 0 and set(calm) == {200}, calm
    assert set(after) == {200}, after
    assert "prematurely closed" not in error_log and "reset by peer" not in error_log, error_log


def test_a_kept_alive_connection_idle_past_gunicorns_default_still_takes_a_post(transactional_db):
    """A front proxy reuses an idle connection for a POST it cannot resend: the web host keeps
    it open longer than the proxy does (gunicorn.conf.py, keepalive; docs/deploy.md, Idle
    connections), so a POST after 3 s idle (gunicorn's default closed it after 2) is answered."""
    key = make_key("idle").value
    body = json.dumps(decision_body()).encode()
    with gunicorn(threads=2) as base:
        conn = http.client.HTTPConnection("127.0.0.1", int(base.rsplit(":", 1)[1]), timeout=30)
        try:
            conn.request("GET", "/v1/health")
            first = conn.getresponse()
            first.read()
            assert first.status == 200 and first.getheader("Connection", "").lower() != "close"
            sock = conn.sock
            time.sleep(3)
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
            conn.request("POST", "/v1/log", body=body, headers=headers)
            assert conn.sock is sock  # the same connection, not a new one
            second = conn.getresponse()
            second.read()
        finally:
            conn.close()
    assert second.status == 201, second.status
