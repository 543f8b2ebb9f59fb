"""Where a delivery's time goes: one process drains a backlog with one sender (no threads, so
the profile is the dispatcher's own work) against the plain tool's keep-alive receiver
(`bench/baselines/limit_http.py --receiver-only`, a separate process), on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_webhooks_bench REDIS_URL=redis://127.0.0.1:6379/2 \\
        .venv/bin/python bench/webhooks_profile.py            # BENCH_EVENTS=2000, BENCH_PROFILE_TOP=25

Prints deliveries/s, SQL statements and database time per delivery (counted by an execute
wrapper), and the cProfile functions with the most cumulative time.

BENCH_PROFILE_THREADED=1 runs the production configuration instead (sender and writer threads,
claims ahead) and prints two profiles: the sender threads' (what lies between two sends) and the
writer threads' (claims ahead and outcome writes), each with its statements.
"""

import cProfile
import io
import json
import os
import pstats
import signal
import subprocess
import sys
import threading
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


THREADED = os.environ.get("BENCH_PROFILE_THREADED") == "1"


class Profiled:
    """Runs a function under a profiler of its own thread, with the statements it executes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.statements = Statements()
        self.seconds = 0.0
        self.lock = threading.Lock()
        self.stats: pstats.Stats | None = None

    def wrap(self, function):
        def run(*args, **kwargs):
            profile = cProfile.Profile()
            started = time.perf_counter()
            statements = Statements()
            with connection.execute_wrapper(statements):
                profile.enable()
                try:
                    return function(*args, **kwargs)
                finally:
                    profile.disable()
                    with self.lock:
                        self.seconds += time.perf_counter() - started
                        self.statements.count += statements.count
                        self.statements.seconds += statements.seconds
                        if self.stats is None:
                            self.stats = pstats.Stats(profile)
                        else:
                            self.stats.add(profile)

        return run

    def report(self, sent: int) -> None:
        print(
            f"\n== {self.name}: {self.seconds:.2f} s in all, SQL {self.statements.seconds:.2f} s in "
            f"{self.statements.count} statements ({self.statements.count / max(sent, 1):.3f} per delivery)"
        )
        if self.stats is None:
            return
        self.stats.sort_stats("cumulative").print_stats(TOP)
        self.stats.sort_stats("tottime").print_stats(TOP // 2)


def threaded(customer: Customer) -> None:
    from webhooks import outcomes

    senders, writers = Profiled("sender threads"), Profiled("writer threads (claims ahead, outcomes)")
    dispatch._hold = senders.wrap(dispatch._hold)
    dispatch._in_writer = writers.wrap(dispatch._in_writer)
    outcomes._in_writer = writers.wrap(outcomes._in_writer)
    started = time.perf_counter()
    sent = dispatch.deliveries_dispatch_due(budget_seconds=600)
    seconds = time.perf_counter() - started
    dispatch.send_pool_close()
    print(
        f"load average {os.getloadavg()[0]:.2f}; {sent} deliveries in {seconds:.2f} s = {sent / seconds:.0f}/s "
        f"with {settings.WEBHOOK_DISPATCH_THREADS} sender threads and {settings.WEBHOOK_OUTCOME_WRITERS} writers"
    )
    senders.report(sent)
    writers.report(sent)
    Webhook.objects.filter(customer=customer).delete()


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
        for start in range(0, EVENTS, 500):
            services.events_emit(
                customer=customer,
                events=[
                    ("bias.detected", {"decision_id": f"p_{i}"})
                    for i in range(start, min(EVENTS, start + 500))
                ],
            )
        if THREADED:
            threaded(customer)
            return
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
