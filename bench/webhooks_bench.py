"""Webhook delivery bench: deliveries/s and event_emit -> receiver first byte (p50/p99), with one
and with two Celery workers, against PostgreSQL + Redis and a local receiver.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_webhooks_bench REDIS_URL=redis://127.0.0.1:6379/2 .venv/bin/python bench/webhooks_bench.py

Options (env): BENCH_EVENTS (burst size, default 2000), BENCH_LATENCY_EVENTS (default 200, sent at
BENCH_LATENCY_RATE per second, default 25), BENCH_CONCURRENCY (prefork processes per worker, default 2),
BENCH_WEBHOOKS (webhooks the events fan out to, default 1: the strictest per-webhook ordering case).
"""

import os
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ["WEBHOOK_ALLOW_INSECURE_URLS"] = "true"
if not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.environ.get("REDIS_URL"):
    sys.exit("set DATABASE_URL=postgres://... and REDIS_URL=redis://... (see the first lines of this file)")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from config.redis import get_redis  # noqa: E402
from keys.models import Customer  # noqa: E402
from tests.processes import celery_worker  # noqa: E402
from webhooks import services  # noqa: E402
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook  # noqa: E402

EVENTS = int(os.environ.get("BENCH_EVENTS", "2000"))
LATENCY_EVENTS = int(os.environ.get("BENCH_LATENCY_EVENTS", "200"))
LATENCY_RATE = float(os.environ.get("BENCH_LATENCY_RATE", "25"))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "2"))
WEBHOOKS = int(os.environ.get("BENCH_WEBHOOKS", "1"))

first_byte: dict[tuple[str, str], float] = {}  # (event id, path) -> perf_counter at the request line
lock = threading.Lock()
received = threading.Semaphore(0)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def parse_request(self):
        self._t = time.perf_counter()  # the request line has just arrived
        return super().parse_request()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with lock:
            first_byte.setdefault((self.headers["webhook-id"], self.path), self._t)
        received.release()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def reset() -> None:
    Delivery.objects.all().delete()
    Event.objects.all().delete()
    DeliveryAttempt.objects.all().delete()
    with lock:
        first_byte.clear()


def wait_deliveries(expected: int, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    got = 0
    while got < expected:
        if not received.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise SystemExit(f"only {got}/{expected} deliveries arrived in {timeout} s")
        got += 1
    return time.perf_counter()


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def run(workers: int, customer: Customer) -> dict[str, float]:
    """Throughput: a backlog of BENCH_EVENTS events is emitted (and committed, their start tasks
    queued) before the workers start; deliveries/s = backlog / (last receipt - first receipt).
    Latency: then, with the workers running, spaced events, event_emit start -> request line."""
    reset()
    while received.acquire(blocking=False):
        pass
    for i in range(EVENTS):
        services.event_emit(customer=customer, type="bias.detected", data={"decision_id": f"tp_{i}"})
    names = [f"bench{i}" for i in range(workers)]
    contexts = [celery_worker(name, beat=(i == 0), concurrency=CONCURRENCY) for i, name in enumerate(names)]
    for ctx in contexts:
        ctx.__enter__()
    try:
        done = wait_deliveries(EVENTS * WEBHOOKS, 600)
        with lock:
            first = min(first_byte.values())
        time.sleep(1.0)
        extra = DeliveryAttempt.objects.count() - EVENTS * WEBHOOKS
        # the backlog's start tasks (one per event) are mostly no-ops by now; let them drain
        client = get_redis()
        while client is not None and client.llen("celery"):
            time.sleep(0.2)
        time.sleep(1.0)
        reset()
        emitted: dict[str, float] = {}
        for i in range(LATENCY_EVENTS):
            started = time.perf_counter()
            event = services.event_emit(
                customer=customer, type="bias.detected", data={"decision_id": f"lat_{i}"}
            )
            emitted[event.id] = started
            time.sleep(max(0.0, 1 / LATENCY_RATE - (time.perf_counter() - started)))
        wait_deliveries(LATENCY_EVENTS * WEBHOOKS, 120)
        with lock:
            latencies = [(t - emitted[eid]) * 1000 for (eid, _), t in first_byte.items() if eid in emitted]
        return {
            "workers": workers,
            "latency_p50_ms": statistics.median(latencies),
            "latency_p99_ms": pct(latencies, 99),
            "burst_deliveries": EVENTS * WEBHOOKS,
            "deliveries_per_s": EVENTS * WEBHOOKS / (done - first),
            "extra_attempts": extra,
        }
    finally:
        for ctx in reversed(contexts):
            ctx.__exit__(None, None, None)


def main() -> None:
    call_command("migrate", verbosity=0)
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    client = get_redis()
    if client is not None:
        client.delete("celery")
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    customer, _ = Customer.objects.get_or_create(id="bench")
    Webhook.objects.filter(customer=customer).delete()
    for i in range(WEBHOOKS):
        services.webhook_create(customer=customer, url=f"http://127.0.0.1:{port}/hook{i}", events=["*"])
    connection.close()
    print(
        f"PostgreSQL + Redis, {WEBHOOKS} webhook(s), {CONCURRENCY} prefork processes per worker, "
        f"latency events {LATENCY_EVENTS} at {LATENCY_RATE:g}/s, burst {EVENTS}"
    )
    for workers in (1, 2):
        r = run(workers, customer)
        print(
            f"workers={r['workers']}: emit->first byte p50 {r['latency_p50_ms']:.1f} ms, "
            f"p99 {r['latency_p99_ms']:.1f} ms; backlog of {r['burst_deliveries']} deliveries at "
            f"{r['deliveries_per_s']:.0f}/s (first to last receipt); "
            f"extra attempts {r['extra_attempts']}; load average now {os.getloadavg()[0]:.2f}"
        )
    reset()


if __name__ == "__main__":
    main()
