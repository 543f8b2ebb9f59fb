"""The embedded broker (config/broker.py) under concurrent producers and a consuming worker:
two processes publish 10,000 messages each while a real Celery worker consumes them.
Nothing is lost, nothing is corrupt, and the worker never dies (with kombu's own
filesystem transport it died of JSONDecodeError within seconds of such a run)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.processes import ROOT, stop

PER_PRODUCER = 10_000
PRODUCERS = 2

PRODUCE = """
import sys
import django
django.setup()  # prepares the data folder, as every entry point of the service does
from config.celery import app
name, count = sys.argv[1], int(sys.argv[2])
with app.producer_or_acquire() as producer:
    for i in range(count):
        app.send_task("tests.broker_tasks.record", args=[f"{name}-{i}"], producer=producer)
"""


def _env(data_dir: Path, receipts: Path) -> dict[str, str]:
    """A minimal environment: the embedded default (no DATABASE_URL, REDIS_URL or broker URL),
    whatever the test run itself was configured with."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    return {
        **keep,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "TRUSTCAL_DATA_DIR": str(data_dir),
        "TRUSTCAL_TEST_RECEIPTS": str(receipts),
        "PYTHONUNBUFFERED": "1",
    }


@pytest.mark.slow
def test_two_producers_and_a_worker_lose_and_corrupt_nothing(tmp_path: Path):
    if settings.REDIS_URL:
        pytest.skip("the embedded broker is used only without REDIS_URL; the SQLite leg runs this")
    receipts = tmp_path / "receipts.txt"
    receipts.touch()
    env = _env(tmp_path / "data", receipts)
    bin_dir = Path(sys.executable).parent
    log_path = tmp_path / "worker.log"
    log_file = log_path.open("w")
    worker = subprocess.Popen(
        [
            str(bin_dir / "celery"),
            "-A",
            "config",
            "worker",
            "-I",
            "tests.broker_tasks",
            "-n",
            "stress@localhost",
            "--concurrency",
            "2",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=env,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        producers = [
            subprocess.Popen([sys.executable, "-c", PRODUCE, f"p{n}", str(PER_PRODUCER)], cwd=ROOT, env=env)
            for n in range(PRODUCERS)
        ]
        for producer in producers:
            assert producer.wait(timeout=300) == 0
        expected = PER_PRODUCER * PRODUCERS
        deadline = time.monotonic() + 300
        lines: list[str] = []
        while time.monotonic() < deadline and worker.poll() is None:
            lines = receipts.read_text().splitlines()
            if len(lines) >= expected:
                break
            time.sleep(0.5)
        assert worker.poll() is None, "the worker died"
        assert len(lines) == expected
        assert set(lines) == {f"p{n}-{i}" for n in range(PRODUCERS) for i in range(PER_PRODUCER)}
        broker = tmp_path / "data" / "broker"
        assert not list(broker.rglob("*.corrupt"))
        assert not [p for p in (broker / "queue").iterdir() if p.name.endswith(".msg")]
    finally:
        stop(worker, group=True)
        log_file.close()
    log = log_path.read_text()
    assert "Unrecoverable error" not in log and "could not be decoded" not in log, log[-2000:]
