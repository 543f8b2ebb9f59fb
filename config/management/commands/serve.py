"""The embedded default in one command: check the port, migrate, then run the Celery worker
(with beat) and gunicorn as supervised children until SIGINT/SIGTERM.

A child that dies is logged and started again after a back-off (1 s, doubling to 30 s; reset
once a child has stayed up for a minute). Each child runs in its own process group, so a
worker killed outright takes its pool processes with it when the group is cleared, and its
heartbeat row is removed: /health says `degraded` until the new worker's first heartbeat."""

import contextlib
import errno
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

logger = logging.getLogger("trustcal.serve")

WORKER_NAME = "embedded@localhost"
BACKOFF_FIRST_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0
STABLE_SECONDS = 60.0


@dataclass
class Child:
    name: str
    argv: list[str]
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    backoff: float = BACKOFF_FIRST_SECONDS
    restart_at: float | None = None
    restarts: int = field(default=0)


def port_check(bind: str) -> None:
    """Refuse at once, before anything says running, when the address is taken."""
    host, _, port = bind.rpartition(":")
    try:
        number = int(port)
    except ValueError as exc:
        raise CommandError(f"TRUSTCAL_BIND/--bind must be host:port, got {bind!r}.") from exc
    probe = socket.socket(socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host.strip("[]") or "0.0.0.0", number))  # noqa: S104 - what gunicorn will bind
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise CommandError(
                f"{bind} is already in use (another Trustcal or another program). Stop it, or start "
                "this one elsewhere: TRUSTCAL_BIND=127.0.0.1:8001 make run"
            ) from exc
        raise CommandError(f"Cannot listen on {bind}: {exc.strerror}.") from exc
    finally:
        probe.close()


def heartbeat_forget(hostname: str) -> None:
    """A dead worker's last heartbeat must not count as a live worker."""
    from config.models import WorkerHeartbeat

    WorkerHeartbeat.objects.filter(hostname=hostname).delete()


class Command(BaseCommand):
    help = "Migrate, then start web (gunicorn) + Celery worker with beat, supervised, until interrupted."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--bind", default=settings.BIND)
        parser.add_argument("--web-workers", type=int, default=1)
        parser.add_argument("--threads", type=int, default=32)
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, *args, **options) -> None:
        port_check(options["bind"])
        call_command("migrate", interactive=False, verbosity=0)
        bindir = os.path.dirname(sys.executable)
        env = dict(os.environ)
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        children: list[Child] = []
        if not options["no_worker"]:
            heartbeat_forget(WORKER_NAME)
            children.append(
                Child(
                    "worker",
                    [
                        os.path.join(bindir, "celery"),
                        "-A",
                        "config",
                        "worker",
                        "--beat",
                        "--loglevel",
                        "WARNING",
                        "-n",
                        WORKER_NAME,
                        "--concurrency",
                        "2",
                        "--schedule",
                        str(settings.DATA_DIR / "celerybeat-schedule"),
                    ],
                )
            )
        # One web process with threads: the in-process rate limits of the embedded default
        # are then exact (README). At scale, REDIS_URL makes them hold across processes.
        # 32 threads: with no front proxy, a client trickling its body holds one for up to the
        # body-read deadline (docs/reference/limits.md, "Slow request bodies"), so a handful
        # of such clients must leave most threads to everyone else.
        children.append(
            Child(
                "web",
                [
                    os.path.join(bindir, "gunicorn"),
                    "config.wsgi:application",
                    "--bind",
                    options["bind"],
                    "--workers",
                    str(options["web_workers"]),
                    "--threads",
                    str(options["threads"]),
                    "--worker-class",
                    "gthread",
                    "--access-logfile",
                    "-",
                    "--graceful-timeout",
                    "20",
                ],
            )
        )
        for child in children:
            self._start(child, env)
        host = options["bind"]
        self.stdout.write(
            f"Trustcal is running at http://{host}/v1  (docs: http://{host}/v1/docs, health: http://{host}/v1/health)\n"
            "Get an admin key:  .venv/bin/python manage.py create_api_key --customer-id admin --tier enterprise --admin\n"
            "Stop with Ctrl-C."
        )
        stopping = False

        def request_stop(signum, _frame) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        try:
            while not stopping:
                self._supervise(children, env)
                time.sleep(0.5)
        finally:
            self._stop_all(children)

    def _start(self, child: Child, env: dict[str, str]) -> None:
        child.proc = subprocess.Popen(child.argv, env=env, start_new_session=True)
        child.started_at = time.monotonic()
        child.restart_at = None

    def _supervise(self, children: list[Child], env: dict[str, str]) -> None:
        now = time.monotonic()
        for child in children:
            proc = child.proc
            if child.restart_at is not None:
                if now >= child.restart_at:
                    child.restarts += 1
                    self.stderr.write(f"serve: starting the {child.name} again (restart {child.restarts})")
                    self._start(child, env)
                continue
            if proc is None or proc.poll() is None:
                continue
            _group_kill(proc)  # pool processes of a worker killed outright
            if child.name == "worker":
                heartbeat_forget(WORKER_NAME)
            if now - child.started_at >= STABLE_SECONDS:
                child.backoff = BACKOFF_FIRST_SECONDS
            self.stderr.write(
                f"serve: the {child.name} exited with status {proc.returncode}; "
                f"restarting in {child.backoff:g} s"
            )
            logger.error(
                "%s exited with status %s; restarting in %s s", child.name, proc.returncode, child.backoff
            )
            child.restart_at = now + child.backoff
            child.backoff = min(BACKOFF_MAX_SECONDS, child.backoff * 2)

    def _stop_all(self, children: list[Child]) -> None:
        running = [c.proc for c in children if c.proc is not None and c.proc.poll() is None]
        for proc in running:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 25
        for proc in running:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for child in children:
            if child.proc is not None:
                _group_kill(child.proc)


def _group_kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
