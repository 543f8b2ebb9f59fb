"""Real processes for tests whose behaviour depends on them: gunicorn web servers and Celery
workers on the test database (commit data with `transactional_db` before they read it)."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url() -> str:
    """The URL of the database the tests are using right now (the test database)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


def process_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": database_url(),
            "TRUSTCAL_DATA_DIR": str(settings.DATA_DIR),
            "REDIS_URL": settings.REDIS_URL,
            "WEBHOOK_ALLOW_INSECURE_URLS": "true" if settings.WEBHOOK_ALLOW_INSECURE_URLS else "false",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    return env


def _wait_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answered
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server at {url} did not start")


@contextmanager
def gunicorn(*, workers: int = 1, threads: int = 4, **env: str) -> Iterator[str]:
    """A real gunicorn serving the app on a free port; yields the base URL (http://127.0.0.1:port)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--worker-class",
            "gthread",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=process_env(**env),
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_http(base + "/v1/health")
        yield base
    finally:
        stop(proc, group=True)


@contextmanager
def celery_worker(
    name: str = "test", *, beat: bool = False, concurrency: int = 2, **env: str
) -> Iterator[subprocess.Popen]:
    """A real Celery worker (optionally with beat) on the test database and broker."""
    args = [
        str(BIN / "celery"),
        "-A",
        "config",
        "worker",
        "-n",
        f"{name}@%h",
        "--concurrency",
        str(concurrency),
        "--loglevel",
        "WARNING",
        "--without-gossip",
        "--without-mingle",
    ]
    if beat:
        args += ["--beat", "--schedule", str(Path(settings.DATA_DIR) / f"beat-{name}")]
    proc = subprocess.Popen(args, cwd=ROOT, env=process_env(**env), start_new_session=True)
    try:
        yield proc
    finally:
        stop(proc, group=True)


def stop(proc: subprocess.Popen, timeout: float = 15.0, *, group: bool = False) -> None:
    """SIGTERM, then SIGKILL after `timeout`; then whatever is left of its process group (a
    worker's pool children outlive a killed parent and would go on consuming the queue);
    `group` only for a process started with start_new_session=True."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the group id is its pid
