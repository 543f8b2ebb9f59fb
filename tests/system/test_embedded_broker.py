"""The embedded broker (config/broker.py) under concurrent producers and a consuming worker:
two processes publish 10,000 messages each while a real Celery worker consumes them.
Nothing is lost, nothing is corrupt, and the worker never dies (with kombu's own
filesystem transport it died of JSONDecodeError within seconds of such a run). And its queue
belongs to one database: a worker of another database refuses it rather than take the
messages sent for this one."""

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
from config.checks import startup_check
startup_check()  # as the web process does first
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


def _worker(env: dict[str, str], log_file, name: str = "stress") -> subprocess.Popen:
    return subprocess.Popen(
        [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            "-I",
            "tests.broker_tasks",
            "-n",
            f"{name}@localhost",
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


@pytest.mark.slow
def test_two_producers_and_a_worker_lose_and_corrupt_nothing(tmp_path: Path):
    if settings.REDIS_URL:
        pytest.skip("the embedded broker is used only without REDIS_URL; the SQLite leg runs this")
    receipts = tmp_path / "receipts.txt"
    receipts.touch()
    env = _env(tmp_path / "data", receipts)
    log_path = tmp_path / "worker.log"
    log_file = log_path.open("w")
    worker = _worker(env, log_file)
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


@pytest.mark.slow
def test_a_worker_of_another_database_refuses_the_queue_instead_of_taking_its_messages(tmp_path: Path):
    """Two services on one data folder, each with a database of its own (seen: the test
    sessions of two xdist workers): the other's worker took the message and ran it against
    its own database, where the job it named did not exist, and the job waited for beat."""
    if settings.REDIS_URL:
        pytest.skip("the embedded broker is used only without REDIS_URL; the SQLite leg runs this")
    receipts = tmp_path / "receipts.txt"
    receipts.touch()
    data = tmp_path / "data"
    mine = {**_env(data, receipts), "DATABASE_URL": f"sqlite:///{tmp_path / 'mine.sqlite3'}"}
    other = {**mine, "DATABASE_URL": f"sqlite:///{tmp_path / 'other.sqlite3'}"}
    sent = subprocess.run([sys.executable, "-c", PRODUCE, "mine", "1"], cwd=ROOT, env=mine, timeout=120)
    assert sent.returncode == 0
    log_path = tmp_path / "other.log"
    with log_path.open("w") as log_file:
        intruder = _worker(other, log_file, "other")
        try:
            assert intruder.wait(timeout=120) != 0
        finally:
            stop(intruder, group=True)
    assert "trustcal.E006" in log_path.read_text(), log_path.read_text()[-2000:]
    assert receipts.read_text() == ""
    assert len(list((data / "broker" / "queue").glob("*.msg"))) == 1  # still there for its own worker
    with (tmp_path / "mine.log").open("w") as log_file:
        own = _worker(mine, log_file, "mine")
        try:
            deadline = time.monotonic() + 120
            while receipts.read_text() != "mine-0\n" and time.monotonic() < deadline:
                time.sleep(0.3)
        finally:
            stop(own, group=True)
    assert receipts.read_text() == "mine-0\n"


@pytest.mark.slow
def test_a_data_folder_moved_whole_still_belongs_to_its_own_database(tmp_path: Path):
    """The embedded default's database lives in its data folder: moving both together (the
    checkout moved, a backup restored elsewhere) is the same service, not another database."""
    if settings.REDIS_URL:
        pytest.skip("the embedded broker is used only without REDIS_URL; the SQLite leg runs this")

    def check(data: Path, database: Path) -> subprocess.CompletedProcess:
        env = {**_env(data, tmp_path / "receipts.txt"), "DATABASE_URL": f"sqlite:///{database}"}
        command = [sys.executable, "manage.py", "check"]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    first = check(tmp_path / "before", tmp_path / "before" / "trustcal.sqlite3")
    assert first.returncode == 0, first.stderr[-2000:]
    assert (tmp_path / "before" / "broker" / "queue" / ".database").exists()  # the folder was claimed
    (tmp_path / "before").rename(tmp_path / "after")
    moved = check(tmp_path / "after", tmp_path / "after" / "trustcal.sqlite3")
    assert moved.returncode == 0 and "trustcal.E006" not in moved.stderr, moved.stderr[-2000:]
    other = check(tmp_path / "after", tmp_path / "other.sqlite3")  # another database is still refused
    assert other.returncode != 0 and "trustcal.E006" in other.stderr, other.stderr[-2000:]
