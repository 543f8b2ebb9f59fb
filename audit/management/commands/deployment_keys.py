"""`python manage.py deployment_keys`: the fingerprints of DJANGO_SECRET_KEY and of the
checkpoint key that this deployment registered, beside this host's; `--register` records this
host's as the deployment's, the last step of a rotation (docs/deploy.md, "One key and one
secret everywhere")."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from audit import checkpoint_key
from config.deployment_keys import (
    CHECKPOINT_KEY,
    SECRET_KEY,
    fingerprint_register,
    fingerprints_registered,
    public_key_fingerprint,
    secret_fingerprint,
)


class Command(BaseCommand):
    help = "Show (or, with --register, record) the key fingerprints every host must share."
    requires_system_checks: list[str] = []  # a host refused by those checks runs this to rotate

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--register",
            action="store_true",
            help="record this host's keys as the deployment's (after every host has them)",
        )

    def handle(self, *args: Any, **options: Any) -> None:  # Any: Django's command options
        mine = {
            SECRET_KEY: secret_fingerprint(settings.SECRET_KEY),
            CHECKPOINT_KEY: public_key_fingerprint(checkpoint_key.public_key()),
        }
        if options["register"]:
            for name, fingerprint in mine.items():
                fingerprint_register(name, fingerprint)
        registered = fingerprints_registered()
        for name, fingerprint in mine.items():
            theirs = registered.get(name)
            state = (
                "same" if theirs == fingerprint else ("none registered" if theirs is None else "DIFFERENT")
            )
            self.stdout.write(
                f"{name}: this host {fingerprint[:16]}  deployment {(theirs or '-')[:16]}  {state}"
            )
