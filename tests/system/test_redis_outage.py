"""Redis down is degraded service, not an error (docs/deploy.md, "When Redis is down"): a real
gunicorn on the test database and a Redis server of the test's own, stopped (SIGSTOP: every
call to it hangs until its timeout, as a blocked port does) and then killed under load, and
started again. No request answers 500, every acknowledged decision is stored in a chain that
verifies, and the rate limits are in Redis again within seconds of its return."""

import json
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from audit.models import Decision
from tests.audit.factories import decision_body
from tests.conftest import make_key
from tests.processes import free_port, gunicorn

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server on PATH"),
]


@contextmanager
def redis_server(port: int, folder) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(
        [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if (
            subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip()
            == b"PONG"
        ):
            break
        time.sleep(0.05)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()


def call(base: str, value: str, path: str, body: dict | None = None) -> tuple[int, dict, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method="POST" if body is not None else "GET")
    request.add_header("Authorization", f"Bearer {value}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}"), dict(error.headers)


def decision(decision_id: str) -> dict:
    return decision_body(decision_id=decision_id)


def test_a_redis_outage_answers_no_500_loses_nothing_and_redis_is_used_again(tmp_path):
    port = free_port()
    issued, ops = make_key("acme"), make_key("ops")
    admin, doomed = make_key("ops", is_admin=True), make_key("beta")
    statuses: Counter[int] = Counter()
    unavailable_without_retry_after: list[int] = []
    acknowledged: list[str] = []
    stop = threading.Event()

    def client(base: str, worker: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            decision_id = f"w{worker}-{n}"
            status, _, headers = call(base, issued.value, "/v1/log", decision(decision_id))
            statuses[status] += 1
            if status == 201:
                acknowledged.append(decision_id)
            if status == 503 and "Retry-After" not in headers:
                unavailable_without_retry_after.append(status)
            status, _, _ = call(base, issued.value, "/v1/audit-trail?limit=1")
            statuses[status] += 1
            time.sleep(0.1)  # within the tier's burst: a 429 here would be the limit doing its job

    with (
        redis_server(port, tmp_path) as redis_proc,
        gunicorn(workers=1, threads=4, REDIS_URL=f"redis://127.0.0.1:{port}/0") as base,
    ):
        assert call(base, issued.value, "/v1/log", decision("warm"))[0] == 201
        for _ in range(3):  # cached by the server under the keys' stamp
            assert call(base, doomed.value, "/v1/engines/status")[0] == 200
        threads = [threading.Thread(target=client, args=(base, w)) for w in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        before_stop = len(acknowledged)
        redis_proc.send_signal(signal.SIGSTOP)  # every call hangs until its socket timeout
        time.sleep(6.0)
        status, health, _ = call(base, ops.value, "/v1/health")
        assert (status, health["status"]) == (200, "degraded")
        # A key revoked while Redis hangs (its stamp cannot be renewed) stops at once, and stays
        # stopped once Redis is back.
        revoke = urllib.request.Request(
            f"{base}/v1/admin/api-keys/{doomed.key.id}", data=b'{"reason": "leaked"}', method="DELETE"
        )
        revoke.add_header("Authorization", f"Bearer {admin.value}")
        revoke.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(revoke, timeout=60) as response:
            assert response.status == 200
        assert call(base, doomed.value, "/v1/engines/status")[0] == 401
        during_stop = len(acknowledged) - before_stop
        redis_proc.send_signal(signal.SIGCONT)
        redis_proc.kill()  # then refused outright
        redis_proc.wait()
        time.sleep(3.0)
        status, metrics, _ = call(base, ops.value, "/v1/metrics")
        assert status == 200, metrics
        assert metrics["redis"]["reachable"] is False

        with redis_server(port, tmp_path):
            back = time.time()
            time.sleep(5.0)  # the retry delay (2 s) and a few requests
            stop.set()
            for thread in threads:
                thread.join(timeout=120)
            # The tier bucket of the key is in Redis again, refilled after its return.
            stamp = subprocess.run(
                ["redis-cli", "-p", str(port), "HGET", f"trustcal:tier:{issued.key.id}", "ts"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            assert stamp and float(stamp) >= back
            _, metrics, _ = call(base, ops.value, "/v1/metrics")
            assert metrics["redis"]["reachable"] is True and metrics["redis"]["outages"] >= 1
            assert call(base, doomed.value, "/v1/engines/status")[0] == 401

        verify = call(base, issued.value, "/v1/audit-trail/verify")[1]

    assert statuses[500] == 0, statuses
    assert unavailable_without_retry_after == []
    assert during_stop > 10, statuses  # decisions kept being acknowledged while Redis hung
    stored = set(Decision.objects.filter(customer_id="acme").values_list("decision_id", flat=True))
    assert set(acknowledged) <= stored
    assert verify["valid"] is True
