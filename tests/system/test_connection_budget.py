"""PostgreSQL connections (docs/deploy.md, "Database connections"): a host whose processes would
open more connections than the server allows refuses to start with the figures, and a task
that cannot reach the database is sent again and counted, not lost."""

import subprocess
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from config import metrics
from config.celery import app
from tests.processes import BIN, ROOT, free_port, process_env, stop


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_web_host_or_worker_over_the_servers_connections_refuses_to_start_with_the_figures():
    # max_connections (100 here) less superuser_reserved_connections less 95: 2 or fewer.
    env = process_env(TRUSTCAL_DATABASE_CONNECTIONS_RESERVE="95")
    web = subprocess.run(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{free_port()}",
         "--workers", "2", "--threads", "4", "--worker-class", "gthread"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert web.returncode != 0
    assert "would open up to 8 PostgreSQL connections (2 processes x 4)" in web.stderr, web.stderr[-2000:]
    assert "TRUSTCAL_DATABASE_CONNECTIONS_RESERVE 95" in web.stderr

    worker = subprocess.run(
        [str(BIN / "celery"), "-A", "config", "worker", "-n", "budget@%h", "--concurrency", "3"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    per_process = (
        1
        + settings.WEBHOOK_DISPATCH_THREADS
        + settings.WEBHOOK_OUTCOME_WRITERS
        + settings.WEBHOOK_TEST_THREADS
    )
    assert worker.returncode != 0
    assert (
        f"would open up to {3 * per_process} PostgreSQL connections (3 processes x {per_process})"
        in worker.stderr
    )


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.django_db(transaction=True)
def test_a_task_whose_database_is_unreachable_is_retried_and_counted(tmp_path: Path):
    receipts = tmp_path / "receipts.txt"
    env = process_env(TRUSTCAL_TEST_RECEIPTS=str(receipts))
    proc = subprocess.Popen(
        [str(BIN / "celery"), "-A", "config", "worker", "-I", "tests.broker_tasks", "-n", "flaky@%h",
         "--concurrency", "1", "--loglevel", "WARNING", "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    message = f"m-{uuid.uuid4().hex}"  # never a message an earlier run left in the broker
    try:
        app.send_task("tests.broker_tasks.flaky_database", args=[message, 2])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and message not in _lines(receipts):
            time.sleep(0.2)
    finally:
        stop(proc, group=True)
    assert [line for line in _lines(receipts) if message in line] == [f"fail {message}"] * 2 + [message]
    if settings.REDIS_URL:  # every worker's counts are in Redis (without it, in the worker's own process)
        assert metrics.snapshot()["tasks"]["retried"] >= 2
        health = Client().get("/v1/health").json()
        assert health["checks"]["workers"]["tasks"]["retried"] >= 2, health
