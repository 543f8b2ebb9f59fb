"""Webhook delivery bench, PostgreSQL + Redis, measured side by side in one run with the plain
loop of `bench/baselines/limit_http.py --concurrency 2 --processes 2` (signed POSTs from httpx,
measured first):

1. the plain loop's requests/s;
2. one webhook: a backlog of BENCH_EVENTS events (default 10,000) emitted and committed before
   two Celery workers start: deliveries/s from first to last receipt, as a ratio of the loop,
   and how many deliveries arrived more than once (duplicates);
3. 25 webhooks of one customer: BENCH_EVENTS / 25 events fanned out to each (the same number
   of deliveries), the same way (each phase also measures the loop again just before it, and
   prints the ratio to that figure too: the load of a shared machine moves within a run);
4. emit -> receiver first byte for spaced events (p50, p99), the "quiet" baseline;
5. the same spaced events while a second customer's 25 webhooks point at a receiver that accepts
   and never answers, with BENCH_NOISY_EVENTS events each queued: the quiet customer's p99 as
   a ratio of its baseline (the dispatcher's per-customer share should keep it near 1).

The receivers answer like the plain loop's receiver (asyncio, keep-alive, an empty 200), so the
ratio compares the senders, not two receivers.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_webhooks_bench REDIS_URL=redis://127.0.0.1:6379/2 \\
        .venv/bin/python bench/webhooks_bench.py

Options (env): BENCH_EVENTS, BENCH_MANY (webhooks of the second phase, default 25),
BENCH_LATENCY_EVENTS (default 200, at BENCH_LATENCY_RATE per second, default 25),
BENCH_NOISY_EVENTS (default 40), BENCH_CONCURRENCY (prefork processes per worker, default 2),
BENCH_PERF_PYTHON (the plain-tool venv's python, default /tmp/perf-venv/bin/python; see
bench/README.md), BENCH_PERF_DIR (default bench/baselines).
"""

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
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

EVENTS = int(os.environ.get("BENCH_EVENTS", "10000"))
MANY = int(os.environ.get("BENCH_MANY", "25"))
LATENCY_EVENTS = int(os.environ.get("BENCH_LATENCY_EVENTS", "200"))
LATENCY_RATE = float(os.environ.get("BENCH_LATENCY_RATE", "25"))
NOISY_EVENTS = int(os.environ.get("BENCH_NOISY_EVENTS", "40"))
NOISY_WEBHOOKS = 25
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "2"))
PERF_PYTHON = os.environ.get("BENCH_PERF_PYTHON", "/tmp/perf-venv/bin/python")
LIMIT_HTTP = Path(os.environ.get("BENCH_PERF_DIR", ROOT / "bench" / "baselines")) / "limit_http.py"
EMIT_BATCH = 500

first_byte: dict[tuple[str, str], float] = {}  # (event id, path) -> perf_counter at the request line
arrivals: Counter[tuple[str, str]] = Counter()
lock = threading.Lock()
# Requests received and when the last one arrived; the bench polls them (waking the bench's
# main thread per request would slow this receiver down, unlike the plain loop's).
received: dict[str, float] = {"count": 0, "last": 0.0}
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The plain loop's receiver (limit_http.py), recording the webhook-id, the path and when
    the request line arrived."""
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            at = time.perf_counter()
            head = await reader.readuntil(b"\r\n\r\n")
            length, event_id = 0, ""
            for header in head.split(b"\r\n"):
                name = header[:15].lower()
                if name == b"content-length:":
                    length = int(header[15:])
                elif name[:11] == b"webhook-id:":
                    event_id = header[11:].strip().decode()
            if length:
                await reader.readexactly(length)
            key = (event_id, line.split(b" ")[1].decode())
            with lock:
                first_byte.setdefault(key, at)
                arrivals[key] += 1
                received["count"] += 1
                received["last"] = at
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        writer.close()


def receiver_start() -> int:
    ready: list[int] = []
    started = threading.Event()

    def run() -> None:
        async def main() -> None:
            server = await asyncio.start_server(_handle, "127.0.0.1", 0, backlog=1024)
            ready.append(server.sockets[0].getsockname()[1])
            started.set()
            await asyncio.Event().wait()

        asyncio.run(main())

    threading.Thread(target=run, daemon=True).start()
    started.wait(10)
    return ready[0]


class Silent:
    """Accepts connections and never answers (they are held until the bench ends)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)


def reset() -> None:
    Delivery.objects.all().delete()
    Event.objects.all().delete()
    DeliveryAttempt.objects.all().delete()
    with lock:
        first_byte.clear()
        arrivals.clear()
        received["count"] = 0


def wait_deliveries(expected: float, timeout: float) -> float:
    """Wait until `expected` requests arrived since the last reset; when the last one did."""
    deadline = time.monotonic() + timeout
    while True:
        with lock:
            got, last = received["count"], received["last"]
        if got >= expected:
            return last
        if time.monotonic() > deadline:
            raise SystemExit(f"only {got}/{expected} deliveries arrived in {timeout} s")
        time.sleep(0.02)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def plain_loop() -> float:
    if not Path(PERF_PYTHON).exists():
        sys.exit(f"{PERF_PYTHON} not found: create the plain-tool venv (bench/README.md)")
    out = subprocess.run(
        [PERF_PYTHON, str(LIMIT_HTTP), "--concurrency", "2", "--processes", "2"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(json.loads(out.strip().splitlines()[-1])["req_per_s"])


def spaced(customer: Customer, tag: str, fan_out: int) -> list[float]:
    """LATENCY_EVENTS events at LATENCY_RATE/s; emit start -> request line, ms."""
    emitted: dict[str, float] = {}
    with lock:
        before = received["count"]
    for i in range(LATENCY_EVENTS):
        started = time.perf_counter()
        event = services.event_emit(
            customer=customer, type="bias.detected", data={"decision_id": f"{tag}_{i}"}
        )
        emitted[event.id] = started
        time.sleep(max(0.0, 1 / LATENCY_RATE - (time.perf_counter() - started)))
    wait_deliveries(before + LATENCY_EVENTS * fan_out, 120)
    with lock:
        return [(t - emitted[eid]) * 1000 for (eid, _), t in first_byte.items() if eid in emitted]


def drain_start_tasks() -> None:
    client = get_redis()
    while client is not None and client.llen("celery"):
        time.sleep(0.2)
    time.sleep(1.0)


def workers() -> list:
    contexts = [celery_worker(f"bench{i}", beat=(i == 0), concurrency=CONCURRENCY) for i in range(2)]
    for ctx in contexts:
        ctx.__enter__()
    return contexts


def workers_stop(contexts: list) -> None:
    for ctx in reversed(contexts):
        ctx.__exit__(None, None, None)


def backlog(customer: Customer, port: int, hooks: int, events: int, tag: str, limit: float) -> str:
    """`events` events fanned out to `hooks` new webhooks, committed before the workers start;
    the deliveries/s from the first to the last receipt, as a ratio of the plain loop measured
    first in this run (`limit`) and of the loop measured again just before this phase (the
    machine's load moves within a run)."""
    again = plain_loop()
    Webhook.objects.filter(customer=customer).delete()
    for i in range(hooks):
        services.webhook_create(customer=customer, url=f"http://127.0.0.1:{port}/{tag}{i}", events=["*"])
    reset()
    client = get_redis()
    for start in range(0, events, EMIT_BATCH):
        services.events_emit(
            customer=customer,
            events=[
                ("bias.detected", {"decision_id": f"{tag}_{i}"})
                for i in range(start, min(events, start + EMIT_BATCH))
            ],
        )
    if client is not None:
        client.delete("celery")  # the beat finds the backlog; no head start for anyone
    connection.close()
    total = events * hooks
    print(
        f"backlog of {total} deliveries ({hooks} webhook(s)), 2 workers x {CONCURRENCY} prefork processes",
        flush=True,
    )
    contexts = workers()
    try:
        done = wait_deliveries(total, 900)
        with lock:
            first = min(first_byte.values())
        time.sleep(2.0)
        with lock:
            duplicates = sum(n - 1 for n in arrivals.values())
    finally:
        workers_stop(contexts)
    rate = total / (done - first)
    line = (
        f"{hooks} webhook(s), {total} deliveries: {rate:.0f}/s = {rate / limit:.2f} of the plain loop "
        f"({rate / again:.2f} of {again:.0f} req/s measured just before); duplicates {duplicates}; "
        f"load average {load()}"
    )
    print(line, flush=True)
    Webhook.objects.filter(customer=customer).delete()
    reset()
    return line


def main() -> None:
    call_command("migrate", verbosity=0)
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    limit = plain_loop()
    lines = [
        f"plain loop (limit_http --concurrency 2 --processes 2): {limit:.0f} req/s; load average {load()}"
    ]
    print(lines[0], flush=True)

    port = receiver_start()
    silent = Silent()
    busy, _ = Customer.objects.get_or_create(id="bench")
    noisy, _ = Customer.objects.get_or_create(id="bench-noisy")
    Webhook.objects.filter(customer__in=[busy, noisy]).delete()
    lines.append(backlog(busy, port, 1, EVENTS, "one", limit))
    lines.append(backlog(busy, port, MANY, max(1, EVENTS // MANY), "many", limit))

    services.webhook_create(customer=busy, url=f"http://127.0.0.1:{port}/quiet", events=["*"])
    contexts = workers()
    try:
        # the workers are up once a first event has gone through
        services.event_emit(customer=busy, type="bias.detected", data={"decision_id": "warm-up"})
        wait_deliveries(1, 120)
        drain_start_tasks()
        reset()
        quiet = spaced(busy, "quiet", 1)
        lines.append(
            f"emit -> first byte, quiet: p50 {statistics.median(quiet):.1f} ms, p99 {pct(quiet, 99):.1f} ms; "
            f"load average {load()}"
        )
        print(lines[-1], flush=True)
        # The noisy customer: every webhook it may have, each to a receiver that never answers.
        for i in range(NOISY_WEBHOOKS):
            services.webhook_create(customer=noisy, url=f"http://localhost:{silent.port}/h{i}", events=["*"])
        for i in range(NOISY_EVENTS):
            services.event_emit(customer=noisy, type="bias.detected", data={"decision_id": f"noisy_{i}"})
        deadline = time.monotonic() + 30
        while len(silent.held) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        loud = spaced(busy, "loud", 1)
        lines.append(
            f"emit -> first byte, quiet customer while {NOISY_WEBHOOKS} webhooks of another hang "
            f"({len(silent.held)} connections held): p50 {statistics.median(loud):.1f} ms, "
            f"p99 {pct(loud, 99):.1f} ms = {pct(loud, 99) / pct(quiet, 99):.2f}x the quiet p99; "
            f"load average {load()}"
        )
        print(lines[-1], flush=True)
    finally:
        workers_stop(contexts)
        Webhook.objects.filter(customer__in=[busy, noisy]).delete()
        reset()
    print("\nsummary of this run:\n" + "\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
