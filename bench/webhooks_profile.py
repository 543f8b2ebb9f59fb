"""Where a delivery's time goes: one process drains a backlog with one sender (no threads, so
the profile is the dispatcher's own work) against the plain tool's keep-alive receiver
(`bench/baselines/limit_http.py --receiver-only`, a separate process), on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_webhooks_bench REDIS_URL=redis://127.0.0.1:6379/2 \\
        .venv/bin/python bench/webhooks_profile.py            # BENCH_EVENTS=2000, BENCH_PROFILE_TOP=25

Prints deliveries/s, SQL statements and database time per delivery (counted by an execute
wrapper), and the cProfile functions with the most cumulative time.

BENCH_PROFILE_THREADED=1 runs the production configuration instead (sender and writer threads,
claims ahead) and prints where the sender threads' time goes (sending, waiting for the claim
ahead) and the writer threads' (claims ahead, outcome writes), with their statements.
"""

import cProfile
import functools
import io
import json
import os
import pstats
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
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
from webhooks import attempt, dispatch, holder, pools, services  # noqa: E402
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


class Timed:
    """Wall time, calls and SQL statements of a function, summed over the threads that run it
    (cProfile cannot profile several threads at once on Python 3.12)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0
        self.seconds = 0.0
        self.statements = Statements()
        self.lock = threading.Lock()

    def wrap(self, function):
        def run(*args, **kwargs):
            statements = Statements()
            started = time.perf_counter()
            try:
                with connection.execute_wrapper(statements):
                    return function(*args, **kwargs)
            finally:
                with self.lock:
                    self.calls += 1
                    self.seconds += time.perf_counter() - started
                    self.statements.count += statements.count
                    self.statements.seconds += statements.seconds

        return run

    def line(self, sent: int) -> str:
        return (
            f"{self.name}: {self.calls} calls, {self.seconds:.2f} s ({self.seconds / max(sent, 1) * 1000:.3f} ms "
            f"per delivery), of which SQL {self.statements.seconds:.2f} s in {self.statements.count} statements"
        )


def threaded(customer: Customer) -> None:
    from webhooks import outcomes

    holders = Timed("sender threads, whole holders")
    sends = Timed("  of which sending (URL check, signing, HTTP)")
    ahead = Timed("  of which waiting for the claim ahead")
    claims = Timed("writer threads: claims ahead + webhook reads")
    writes = Timed("writer threads: outcome writes")
    dispatch._hold = holders.wrap(dispatch._hold)
    attempt.send = sends.wrap(attempt.send)
    holder.Holder._next = claims.wrap(holder.Holder._next)  # type: ignore[method-assign]
    outcomes.Outcomes._write = writes.wrap(outcomes.Outcomes._write)  # type: ignore[method-assign]
    real_result = Future.result

    def result(self, timeout=None):
        if getattr(self, "_ahead", False):
            started = time.perf_counter()
            try:
                return real_result(self, timeout)
            finally:
                with ahead.lock:
                    ahead.calls += 1
                    ahead.seconds += time.perf_counter() - started
        return real_result(self, timeout)

    real_submit = ThreadPoolExecutor.submit

    def submit(self, fn, /, *args, **kwargs):
        future = real_submit(self, fn, *args, **kwargs)
        if args and isinstance(args[0], functools.partial):
            future._ahead = True  # type: ignore[attr-defined]  # the holder's claim ahead
        return future

    Future.result = result  # type: ignore[method-assign]
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]
    started = time.perf_counter()
    sent = dispatch.deliveries_dispatch_due(budget_seconds=600)
    seconds = time.perf_counter() - started
    pools.send_pool_close()
    print(
        f"load average {os.getloadavg()[0]:.2f}; {sent} deliveries in {seconds:.2f} s = {sent / seconds:.0f}/s "
        f"with {settings.WEBHOOK_DISPATCH_THREADS} sender threads and {settings.WEBHOOK_OUTCOME_WRITERS} writers "
        f"({seconds / sent * 1000:.3f} ms per delivery)"
    )
    for timed in (holders, sends, ahead, claims, writes):
        print(timed.line(sent))
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
