"""The embedded default in one command: migrate, then run the Celery worker (with beat)
and gunicorn as children, forward SIGINT/SIGTERM, and wait (shared/notes)."""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Migrate, then start web (gunicorn) + Celery worker with beat, until interrupted."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--bind", default=os.environ.get("TRUSTCAL_BIND", "127.0.0.1:8000"))
        parser.add_argument("--web-workers", type=int, default=1)
        parser.add_argument("--threads", type=int, default=8)
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, *args, **options) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        bindir = os.path.dirname(sys.executable)
        env = dict(os.environ)
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        children: list[subprocess.Popen] = []
        if not options["no_worker"]:
            children.append(
                subprocess.Popen(
                    [
                        os.path.join(bindir, "celery"),
                        "-A",
                        "config",
                        "worker",
                        "--beat",
                        "--loglevel",
                        "WARNING",
                        "-n",
                        "embedded@localhost",
                        "--concurrency",
                        "2",
                        "--schedule",
                        str(settings.DATA_DIR / "celerybeat-schedule"),
                    ],
                    env=env,
                )
            )
        # One web process with threads: the in-process rate limits of the embedded default
        # are then exact (README). At scale, REDIS_URL makes them hold across processes.
        children.append(
            subprocess.Popen(
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
                env=env,
            )
        )
        host = options["bind"]
        self.stdout.write(
            f"Trustcal is running at http://{host}/v1  (docs: http://{host}/v1/docs, health: http://{host}/v1/health)\n"
            "Get an admin key:  .venv/bin/python manage.py create_api_key --customer-id admin --tier enterprise --admin\n"
            "Stop with Ctrl-C."
        )
        stopping = False

        def forward(signum, _frame) -> None:
            nonlocal stopping
            stopping = True
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGINT, forward)
        signal.signal(signal.SIGTERM, forward)
        try:
            while not stopping and all(child.poll() is None for child in children):
                time.sleep(0.5)
        finally:
            forward(signal.SIGTERM, None)
            deadline = time.time() + 25
            for child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.time()))
                except subprocess.TimeoutExpired:
                    child.kill()
