"""python manage.py seed_demo: a realistic demo organisation for a newcomer to look at."""

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Create a demo organisation (demo-bank): a loan-approval model, 36 reviewers, 3,300 decisions, "
        "bias and amplification alerts of every severity, Fairlearn signals, a webhook, and staff users. "
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
        self.stdout.write(
            f"Done in {time.monotonic() - started:.1f} s. Start the service (`make run`) and sign in at "
            f"http://127.0.0.1:8000/admin/ {who}."
        )
