from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.scopes import ALL_SCOPES
from keys.models import CUSTOMER_ID_HELP, Tier, customer_id_valid
from keys.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key and print it (the value alone on the last line)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--customer-id", required=True)
        parser.add_argument("--tier", required=True, choices=[t.value for t in Tier])
        parser.add_argument("--admin", action="store_true", help="make it an admin key")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--scopes",
            default=",".join(ALL_SCOPES),
            help=f"comma-separated subset of {', '.join(ALL_SCOPES)} (default: all three)",
        )

    def handle(self, *args: Any, **options: Any) -> None:  # Any: Django's command options
        customer_id = options["customer_id"].strip()
        if not customer_id_valid(customer_id):
            raise CommandError(f"--customer-id must be {CUSTOMER_ID_HELP}")
        scopes = [scope.strip() for scope in options["scopes"].split(",") if scope.strip()]
        if not scopes or set(scopes) - set(ALL_SCOPES):
            raise CommandError(f"--scopes must be a comma-separated subset of {', '.join(ALL_SCOPES)}")
        issued = api_key_create(
            customer_id=customer_id,
            tier=options["tier"],
            description=options["description"],
            is_admin=options["admin"],
            scopes=scopes,
        )
        kind = "admin key" if issued.key.is_admin else "key"
        self.stderr.write(
            f"Created {kind} {issued.key.id} for customer {customer_id} ({issued.key.tier}). Shown once:"
        )
        self.stdout.write(issued.value)
