"""python manage.py seed_demo: a realistic demo organisation for a newcomer to look at."""

import socket
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Create a demo organisation (demo-bank): a loan-approval model, 36 reviewers (calibrated, over- and "
        "under-trusting), 3,300 decisions and 321 vigilance probes over two months, drift monitors and their "
        "alarms, bias and amplification alerts, Fairlearn signals, a webhook, and staff users. "
        "Idempotent: a second run changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-users",
            action="store_true",
            help="Do not create the demo-admin and demo-officer staff users.",
        )

    def handle(self, *args, **options) -> None:
        try:
            import fairlearn  # noqa: F401
        except ImportError:
            raise CommandError(
                "seed_demo computes its fairness signals with Fairlearn, which `make run` does not install: "
                "run `make demo` (or `.venv/bin/pip install -c constraints.txt -e '.[demo]'`) first."
            )
        from console.demo import seed

        started = time.monotonic()
        report = seed(create_users=not options["no_users"])
        for line in report.lines:
            self.stdout.write(f"- {line}")
        if report.secrets:
            self.stdout.write(self.style.WARNING("Shown once, now (stored only as hashes):"))
            for line in report.secrets:
                self.stdout.write(f"  {line}")
        who = (
            "with your superuser (`python manage.py createsuperuser`)"
            if options["no_users"]
            else "as demo-officer (a compliance officer) or demo-admin (everything)"
        )
        url = sign_in_url(settings.BIND)
        if _listening(settings.BIND):
            then = f"The service answers on {settings.BIND}: sign in at {url} {who}."
        else:
            then = f"Then start the service (`make run`) and sign in at {url} {who}."
        self.stdout.write(f"Done in {time.monotonic() - started:.1f} s. {then}")


def sign_in_url(bind: str) -> str:
    """The console's address for the service's bind (TRUSTCAL_BIND in the README's environment table): a
    wildcard host is reached on the loopback address."""
    host, _, port = bind.rpartition(":")
    host = host.strip("[]")
    if host in ("", "0.0.0.0", "::"):  # noqa: S104 (a bind, read, not listened on)
        host = "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/admin/"


def _listening(bind: str) -> bool:
    host, _, port = sign_in_url(bind).removeprefix("http://").removesuffix("/admin/").rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=0.5):
            return True
    except (OSError, ValueError):
        return False
