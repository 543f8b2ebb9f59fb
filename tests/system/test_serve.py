"""`manage.py serve`, the embedded default's one command, run for real: a taken port is
refused at once, and a worker killed outright is restarted and work resumes."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from tests.processes import ROOT, free_port
from tests.webhooks.receiver import Receiver, start

pytestmark = pytest.mark.slow


def _env(data_dir: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    return {
        **keep,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "TRUSTCAL_DATA_DIR": str(data_dir),
        "WEBHOOK_ALLOW_INSECURE_URLS": "true",
        "PYTHONUNBUFFERED": "1",
    }


def _skip_with_services() -> None:
    if settings.REDIS_URL:
        pytest.skip("serve is the embedded default (no DATABASE_URL/REDIS_URL); the SQLite leg runs this")


def test_a_taken_port_is_refused_at_once_with_a_clear_message(tmp_path: Path):
    _skip_with_services()
    holder = socket.create_server(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    try:
        done = subprocess.run(
            [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        holder.close()
    assert done.returncode != 0
    assert f"127.0.0.1:{port} is already in use" in done.stderr
    assert "running" not in done.stdout


def _json(url: str, *, key: str | None = None, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode() if body is not None else None,
        method="POST" if body is not None else "GET",
        headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")
    except OSError:
        return 0, {}


def _until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _worker_pids(serve_pid: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == serve_pid and b"celery" in cmdline:
            pids.append(int(stat.parent.name))
    return pids


def test_a_killed_worker_is_restarted_and_work_resumes(tmp_path: Path):
    _skip_with_services()
    port = free_port()
    base = f"http://127.0.0.1:{port}/v1"
    env = _env(tmp_path)
    log = (tmp_path / "serve.log").open("w")
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    receiver = Receiver()
    server, _ = start(receiver)
    try:
        _until(lambda: _json(base + "/health")[1].get("status") == "healthy", 120, "a healthy service")
        key = (
            subprocess.run(
                [
                    sys.executable,
                    "manage.py",
                    "create_api_key",
                    "--customer-id",
                    "acme",
                    "--tier",
                    "enterprise",
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        status, hook = _json(base + "/webhooks", key=key, body={"url": receiver.url, "events": ["*"]})
        assert status == 201, hook

        (old,) = _worker_pids(serve.pid)
        os.kill(old, signal.SIGKILL)
        _until(lambda: _json(base + "/health")[1].get("status") == "degraded", 30, "health to say degraded")
        new = _until(lambda: [p for p in _worker_pids(serve.pid) if p != old], 60, "a new worker")
        assert new and old not in _worker_pids(serve.pid)
        _until(
            lambda: _json(base + "/health")[1].get("status") == "healthy", 120, "the new worker's heartbeat"
        )

        status, _ = _json(f"{base}/webhooks/{hook['webhook_id']}/test", key=key, body={})
        assert status in (200, 202)
        _until(lambda: receiver.requests, 60, "the test delivery after the restart")
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
        server.shutdown()
        log.close()
    output = (tmp_path / "serve.log").read_text()
    assert "the worker exited with status" in output and "starting the worker again" in output
