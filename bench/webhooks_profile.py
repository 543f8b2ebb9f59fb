"""Where a delivery's time goes: one process drains a backlog with one sender (no threads, so
the profile is the dispatcher's own work) against the plain tool's keep-alive receiver
(`bench/baselines/limit_http.py --receiver-only`, a separate process), on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_webhooks_bench REDIS_URL=redis://127.0.0.1:6379/2 \\
        .venv/bin/python bench/webhooks_profile.py            # BENCH_EVENTS=2000, BENCH_PROFILE_TOP=25

Prints deliveries/s, SQL statements and database time per delivery (counted by an execute
wrapper), and the cProfile functions with the most cumulative time.
"""

import cProfile
import io
import json
import os
import pstats
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ["WEBHOOK_ALLOW_INSECURE_URLS"] = "true"
if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
    sys.exit("set DATABASE_URL=postgres://... (see the first lines of this file)")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from keys.models import Customer  # noqa: E402
from webhooks import dispatch, services  # noqa: E402
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook  # noqa: E402

EVENTS = int(os.environ.get("BENCH_EVENTS", "2000"))
TOP = int(os.environ.get("BENCH_PROFILE_TOP", "25"))
PERF_PYTHON = os.environ.get("BENCH_PERF_PYTHON", "/tmp/perf-venv/bin/python")
LIMIT_HTTP = Path(os.environ.get("BENCH_PERF_DIR", ROOT / "bench" / "baselines")) / "limit_http.py"


class Statements:
    """Counts SQL statements and their time (an execute wrapper, nothing mocked)."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - started
            self.count += 1


def main() -> None:
    call_command("migrate", verbosity=0)
    receiver = subprocess.Popen(
        [PERF_PYTHON, str(LIMIT_HTTP), "--receiver-only", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert receiver.stdout is not None
        port = json.loads(receiver.stdout.readline())["listening"]
        customer, _ = Customer.objects.get_or_create(id="bench-profile")
        Webhook.objects.filter(customer=customer).delete()
        services.webhook_create(customer=customer, url=f"http://127.0.0.1:{port}/hook", events=["*"])
        Delivery.objects.all().delete()
        DeliveryAttempt.objects.all().delete()
        Event.objects.all().delete()
        for i in range(EVENTS):
            services.event_emit(customer=customer, type="bias.detected", data={"decision_id": f"p_{i}"})
        settings.WEBHOOK_DISPATCH_THREADS = 1
        statements = Statements()
        profile = cProfile.Profile()
        started = time.perf_counter()
        with connection.execute_wrapper(statements):
            profile.enable()
            sent = dispatch.deliveries_dispatch_due(budget_seconds=600)
            profile.disable()
        seconds = time.perf_counter() - started
        print(
            f"load average {os.getloadavg()[0]:.2f}; {sent} deliveries in {seconds:.2f} s = {sent / seconds:.0f}/s "
            f"with one sender; {seconds / sent * 1000:.3f} ms per delivery, of which SQL "
            f"{statements.seconds / sent * 1000:.3f} ms in {statements.count / sent:.2f} statements"
        )
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        stats.sort_stats("cumulative").print_stats(TOP)
        stats.sort_stats("tottime").print_stats(TOP)
        print(out.getvalue())
        Webhook.objects.filter(customer=customer).delete()
    finally:
        receiver.send_signal(signal.SIGTERM)
        receiver.wait(10)


if __name__ == "__main__":
    main()
