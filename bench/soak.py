"""A black-box soak of `manage.py serve` (web and worker together; the embedded default, or
PostgreSQL + Redis with --database-url/--redis-url) under concurrent mixed traffic from
several customers, with the worker SIGKILLed halfway, then the books checked: no 5xx, every
event delivered to the receivers (no duplicate), every export completed, every audit chain
verifying. `--hostile` adds a hostile tenant sending the bodies of docs/reference/limits.md
alongside, under two keys (two customers: the floods would otherwise keep its bodies at its
thread share, 429 before they are read): oversized batches, ten-year and ten-thousand-year
export periods, trickled bodies, numbers beyond a double, `-0.0` in each number field of
`/log`, `/calibrate` and batch items, duplicate keys (top level, nested, in a batch item, in
`/calibrate`), floods of unknown keys each followed by another tenant's valid key that must
work, and 40 connections sending `POST /log/batch` bodies that declare 8 MiB at 1 byte/s. Its
answers are counted apart, its 5xx with all, and its two chains are verified at the end with
the others (the last two of `chains`). Each 5xx is kept with its problem's code and detail
(`server_error_kinds`), which tells the paths that answer 503 apart. The plain customers'
latency (`plain_latency_ms`) is what a run with `--hostile` is compared by with one without.

    .venv/bin/python bench/soak.py --minutes 10 --clients 8 [--hostile] [--no-kill]
    .venv/bin/python bench/soak.py --minutes 10 --database-url postgres://... --redis-url redis://...

Everything goes over HTTP on loopback; nothing reads the database directly.
"""

import argparse
import contextlib
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Receiver(BaseHTTPRequestHandler):
    ids: Counter = Counter()
    lock = threading.Lock()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.lock:
            Receiver.ids[self.headers.get("webhook-id", "")] += 1
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:
        pass


class Client:
    """One keep-alive connection; (status, body, seconds) per call."""

    def __init__(self, port: int, key: str | None) -> None:
        self.port = port
        self.key = key
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers: dict[str, str] = {}
        self.last: dict = {}  # the last answer's parsed body

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict, float]:
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        data = json.dumps(body).encode() if body is not None else None
        t0 = time.perf_counter()
        for attempt in range(2):
            try:
                self.conn.request(method, "/v1" + path, body=data, headers=headers)
                response = self.conn.getresponse()
                raw = response.read()
                self.headers = dict(response.getheaders())
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                if attempt:
                    self.last = {}
                    return 0, {}, time.perf_counter() - t0
        seconds = time.perf_counter() - t0
        try:
            parsed = (
                json.loads(raw) if raw and response.getheader("Content-Type", "").endswith("json") else {}
            )
        except ValueError:
            parsed = {}
        self.last = parsed
        return response.status, parsed, seconds


def problem_of(body: dict) -> tuple[str, str]:
    """A problem document's code and the start of its detail: which of the paths that answer
    503 answered (the database locked or unreachable, a group-commit wait, paused checkpoints)."""
    return str(body.get("code") or ""), str(body.get("detail") or "")[:90]


def processes():
    """(pid, parent pid, /proc stat fields after the name, command line) of every process."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        yield int(stat.parent.name), int(fields[1]), fields, cmdline


def worker_pids(serve_pid: int) -> list[int]:
    return [pid for pid, ppid, _, cmdline in processes() if ppid == serve_pid and b"celery" in cmdline]


def cpu_seconds(serve_pid: int) -> dict[str, float]:
    """CPU seconds (user + system) so far of serve's descendants, summed per kind (web,
    worker): where the run's CPU went. A worker killed earlier is not counted."""
    parents, kinds, ticks = {}, {}, {}
    for pid, ppid, fields, cmdline in processes():
        parents[pid] = ppid
        kinds[pid] = "worker" if b"celery" in cmdline else "web" if b"gunicorn" in cmdline else "other"
        ticks[pid] = int(fields[11]) + int(fields[12])
    out: dict[str, float] = {}
    for pid, kind in kinds.items():
        ancestor = parents.get(pid)
        while ancestor and ancestor != serve_pid:
            ancestor = parents.get(ancestor)
        if ancestor == serve_pid:
            out[kind] = out.get(kind, 0.0) + ticks[pid] / os.sysconf("SC_CLK_TCK")
    return {kind: round(value, 1) for kind, value in sorted(out.items())}


def percentiles(seconds: list[float]) -> dict:
    ordered = sorted(seconds)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered) * 1000, 1),
        "p99": round(ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000, 1),
    }


def decision(rnd: random.Random, n: int) -> dict:
    ai = rnd.choice(["approve", "deny"])
    follow = rnd.random() < 0.8
    body = {
        "decision_id": f"soak-{n}-{rnd.getrandbits(40):x}",
        "user_id": f"reviewer-{rnd.randrange(30)}",
        "model_id": rnd.choice(["loan-v1", "loan-v2"]),
        "ai_recommendation": ai,
        "ai_confidence": round(rnd.random(), 3),
        "user_decision": ai if follow else ("deny" if ai == "approve" else "approve"),
        "context": "soak",
        "subgroups": {
            "gender": rnd.choice(["female", "male"]),
            "age_group": rnd.choice(["18-30", "31-50", "51+"]),
        },
    }
    if rnd.random() < 0.5:
        body["outcome"] = rnd.choice(["approve", "deny"])
    return body


def traffic(port: int, key: str, stop: threading.Event, seed: int, stats: dict, lock: threading.Lock) -> None:
    rnd = random.Random(seed)
    started = time.time()
    client = Client(port, key)
    n = 0
    while not stop.is_set():
        n += 1
        roll = rnd.random()
        if roll < 0.45:
            op, (status, _, seconds) = (
                "POST /log",
                client.call("POST", "/log", decision(rnd, seed * 10**7 + n)),
            )
        elif roll < 0.65:
            body = decision(rnd, seed * 10**7 + n)
            body["confidence"] = body.pop("ai_confidence")
            op, (status, _, seconds) = "POST /calibrate", client.call("POST", "/calibrate", body)
        elif roll < 0.72:
            items = [decision(rnd, seed * 10**7 + n * 100 + i) for i in range(50)]
            op, (status, _, seconds) = (
                "POST /log/batch",
                client.call("POST", "/log/batch", {"decisions": items}),
            )
        elif roll < 0.80:
            op, (status, _, seconds) = "POST /trust-score", client.call("POST", "/trust-score", {})
        elif roll < 0.86:
            op, (status, _, seconds) = "GET /trust-score/trend", client.call("GET", "/trust-score/trend")
        elif roll < 0.91:
            op, (status, _, seconds) = "GET /audit-trail", client.call("GET", "/audit-trail?limit=20")
        elif roll < 0.95:
            op, (status, _, seconds) = "GET /bias/subgroups", client.call("GET", "/bias/subgroups")
        elif roll < 0.975:
            op, (status, _, seconds) = "GET /health", client.call("GET", "/health")
        elif roll < 0.99:
            op, (status, body, seconds) = "GET /audit-trail/verify", client.call("GET", "/audit-trail/verify")
            start = int(client.headers.get("X-Verified-From-Sequence") or 0)
            read = (body.get("entries_checked") or start) - start  # entries this call read
            with lock:
                stats["verify_reads"].append((round(time.time() - started), round(seconds * 1000), read))
        else:
            body = {
                "template": rnd.choice(["eu_ai_act", "texas_traiga"]),
                "format": rnd.choice(["csv", "json", "pdf"]),
            }
            op, (status, _, seconds) = "POST /export", client.call("POST", "/export", body)
        with lock:
            stats["status"][status] += 1
            stats["latency"].setdefault(op, []).append(seconds)
            stats["when"].setdefault(op, []).append((round(time.time() - started), round(seconds * 1000)))
            if status >= 500 or status == 0:
                stats["errors"].append((op, status, *problem_of(client.last)))


def _raw(port: int, key: str, path: str, content_type: str, body: bytes, *, trickle: float = 0.0) -> int:
    """One request on its own connection: the body sent at once, or a byte every `trickle`
    seconds; the answer's status (0 when the server closed without one)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
            head = (
                f"POST /v1{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode()
            sock.sendall(head)
            try:
                if trickle:
                    for byte in body:
                        sock.sendall(bytes([byte]))
                        time.sleep(trickle)
                else:
                    sock.sendall(body)
            except OSError:
                pass  # the server answered and closed before the whole body: read its answer
            answer = b""
            while b"\r\n" not in answer:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
            return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    except (OSError, ValueError, IndexError):
        return 0


def negative_zero(rnd: random.Random, n: int, turn: int) -> tuple[str, str, str]:
    """A body holding `-0.0` (stored as 0.0; the customer's chain must still verify at the end),
    in turn in each field that takes a number: (op, path, raw JSON)."""
    body = decision(rnd, n)
    body.pop("ai_confidence")
    variant = turn % 4
    if variant == 0:
        return "log -0.0 confidence", "/log", json.dumps(body)[:-1] + ', "ai_confidence": -0.0}'
    if variant == 1:
        return "log -0.0 review_seconds", "/log", json.dumps(body)[:-1] + ', "review_seconds": -0.0}'
    if variant == 2:
        return "calibrate -0.0", "/calibrate", json.dumps(body)[:-1] + ', "confidence": -0.0}'
    item = json.dumps(body)[:-1] + ', "ai_confidence": -0.0, "review_seconds": -0.0}'
    return "batch -0.0 item", "/log/batch", '{"decisions": [' + item + "]}"


def duplicate_key(rnd: random.Random, n: int, turn: int) -> tuple[str, str, str]:
    """A body naming a key twice (400 INVALID_JSON, nothing stored), in turn at the top of
    `/log`, inside its subgroups, in a batch item and in `/calibrate`: (op, path, raw JSON)."""
    raw = json.dumps(decision(rnd, n))
    variant = turn % 4
    if variant == 1:
        return "log duplicate nested key", "/log", raw.replace('"gender": ', '"gender": "x", "gender": ', 1)
    twice = raw.replace('"user_decision": ', '"user_decision": "deny", "user_decision": ', 1)
    if variant == 2:
        return "batch duplicate key", "/log/batch", '{"decisions": [' + twice + "]}"
    if variant == 3:
        return "calibrate duplicate key", "/calibrate", twice.replace('"ai_confidence"', '"confidence"')
    return "log duplicate key", "/log", twice


def hostile(
    port: int, key: str, stop: threading.Event, stats: dict, lock: threading.Lock, neighbour: str = ""
) -> None:
    """One hostile customer: the payloads of docs/reference/limits.md in turn, while 8 of its
    connections trickle 56-byte bodies over 35 s (see slow_bodies)."""
    rnd = random.Random(666)
    client = Client(port, key)
    oversized = b"1\n" * (4 * 1024 * 1024 - 1)  # an 8 MiB NDJSON batch of 4 million items
    n = 0
    while not stop.is_set():
        n += 1
        kind = n % 8
        if kind == 0:
            op, status = "batch 8 MiB", _raw(port, key, "/log/batch", "application/x-ndjson", oversized)
        elif kind == 1:
            period = rnd.choice(
                [{"from": "0001-01-01", "to": "9999-12-31"}, {"from": "2016-11-24", "to": "2026-11-24"}]
            )
            body = {"template": "eu_ai_act", "format": "pdf", "time_period": period}
            op, status = "export long period", client.call("POST", "/export", body)[0]
        elif kind == 2:
            item = json.dumps(decision(rnd, 10**9 + n))[:-1] + ', "metadata": {"x": 1e400}}'
            op, status = "log 1e400", _raw(port, key, "/log", "application/json", item.encode())
        elif kind == 3:
            items = [json.dumps(decision(rnd, 10**9 + n * 10 + i)) for i in range(3)]
            items[1] = items[1][:-1] + ', "metadata": {"x": -1e400}}'
            batch = ('{"decisions": [' + ", ".join(items) + "]}").encode()
            op, status = "batch 1e400 item", _raw(port, key, "/log/batch", "application/json", batch)
        elif kind == 5:
            op, path, raw = negative_zero(rnd, 10**9 + n, n // 8)
            status = _raw(port, key, path, "application/json", raw.encode())
        elif kind == 6:
            op, path, raw = duplicate_key(rnd, 10**9 + n, n // 8)
            status = _raw(port, key, path, "application/json", raw.encode())
        elif kind == 7:
            guesses = [Client(port, f"tcal_{rnd.getrandbits(200):040x}"[:45]) for _ in range(25)]
            codes = Counter(guess.call("GET", "/webhooks")[0] for guess in guesses)
            with lock:
                for code, count in codes.items():
                    stats["hostile"][f"unknown key: {code}"] += count
            # another tenant's valid key from the same address must still work (docs/reference/
            # access.md); the hostile customer's own key may meet its share of the threads instead
            op, status = (
                "valid key after unknown keys",
                Client(port, neighbour or key).call("GET", "/webhooks")[0],
            )
            if status != 200:
                with lock:
                    stats["errors"].append(("valid key refused after unknown keys", status))
        else:
            signal_body = (
                json.dumps(
                    {
                        "externalToolId": "fairlearn",
                        "externalToolVersion": "0.15.0",
                        "modelId": "m",
                        "modelVersion": "1",
                        "metricName": "demographic_parity",
                        "metricValue": 0.2,
                        "threshold": 0.1,
                        "passesThreshold": False,
                        "protectedAttribute": "gender",
                        "privilegedGroup": "m",
                        "unprivilegedGroup": "f",
                        "sampleSize": 100,
                        "signalTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    }
                )[:-1]
                + ', "rawPayload": {"d": 1e400}}'
            )
            op, status = (
                "signal 1e400",
                _raw(port, key, "/model-fairness-signals", "application/json", signal_body.encode()),
            )
        with lock:
            stats["hostile"][f"{op}: {status}"] += 1
            if status >= 500:
                stats["errors"].append((f"hostile {op}", status))
        stop.wait(0.5)


def slow_bodies(port: int, key: str, stop: threading.Event, stats: dict, lock: threading.Lock) -> None:
    """One of the hostile customer's trickling connections, over and over."""
    body = json.dumps({"user_id": "slow", "ai_recommendation": "a", "user_decision": "a"}).encode()[:56]
    while not stop.is_set():
        status = _raw(port, key, "/log", "application/json", body, trickle=35 / 56)
        with lock:
            stats["hostile"][f"trickled body: {status}"] += 1
            if status >= 500:
                stats["errors"].append(("hostile trickled body", status))


def slow_batches(port: int, key: str, stop: threading.Event, stats: dict, lock: threading.Lock) -> None:
    """One of the hostile customer's 40 connections: a POST /log/batch that declares 8 MiB and
    sends it at 1 byte/s, answered (429 beyond the customer's share of the threads, 408 at the
    body deadline) and started again."""
    while not stop.is_set():
        status = 0
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
                sock.sendall(
                    (
                        f"POST /v1/log/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                        f"Content-Type: application/json\r\nContent-Length: {8 * 1024 * 1024}\r\n\r\n"
                    ).encode()
                )
                sock.settimeout(1.0)
                answer = b""
                while not stop.is_set() and b"\r\n" not in answer:
                    try:
                        chunk = sock.recv(4096)
                        if not chunk:
                            break
                        answer += chunk
                    except TimeoutError:  # a second without an answer: one more byte
                        with contextlib.suppress(OSError):
                            sock.sendall(b" ")
                if answer.startswith(b"HTTP/"):
                    status = int(answer.split(b" ", 2)[1])
        except (OSError, ValueError, IndexError):
            status = 0
        if stop.is_set() and status == 0:
            break
        with lock:
            stats["hostile"][f"slow 8 MiB batch: {status}"] += 1
            if status >= 500:
                stats["errors"].append(("hostile slow batch", status))
        stop.wait(0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--customers", type=int, default=3)
    parser.add_argument("--no-kill", action="store_true", help="leave the worker alone (a baseline)")
    parser.add_argument(
        "--hostile", action="store_true", help="add one hostile customer (see the module doc)"
    )
    parser.add_argument("--database-url", default="", help="PostgreSQL (an empty database you own)")
    parser.add_argument("--redis-url", default="", help="Redis (a database number you own)")
    parser.add_argument(
        "--web-threads", type=int, default=32, help="serve's web threads (PostgreSQL connections)"
    )
    parser.add_argument("--port", type=int, default=0, help="the service's port (default: a free one)")
    parser.add_argument("--receiver-port", type=int, default=0, help="the webhook receiver's (default: free)")
    parser.add_argument(
        "--settle-minutes", type=float, default=5, help="how long to wait for deliveries and exports after"
    )
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="trustcal-soak-"))
    port = args.port or free_port()
    report: dict = {"data_dir": str(data_dir), "load_average_at_start": os.getloadavg()}
    admin_key = "tcal_" + "".join(
        random.SystemRandom().choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        for _ in range(40)
    )
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    env = {
        **keep,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "TRUSTCAL_DATA_DIR": str(data_dir),
        "TRUSTCAL_BOOTSTRAP_ADMIN_KEY": admin_key,
        "TRUSTCAL_RATE_LIMITS_ENABLED": "false",
        "WEBHOOK_ALLOW_INSECURE_URLS": "true",
        "PYTHONUNBUFFERED": "1",
        **({"DATABASE_URL": args.database_url} if args.database_url else {}),
        **({"REDIS_URL": args.redis_url} if args.redis_url else {}),
    }
    log = (data_dir / "serve.log").open("w")
    serve = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--threads",
            str(args.web_threads),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    receiver = ThreadingHTTPServer(("127.0.0.1", args.receiver_port), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    receiver_url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    try:
        admin = Client(port, admin_key)
        deadline = time.time() + 120
        while time.time() < deadline and admin.call("GET", "/health")[1].get("status") != "healthy":
            time.sleep(0.5)
        keys, hooks = [], []
        for c in range(args.customers):
            status, body, _ = admin.call(
                "POST", "/admin/api-keys", {"customer_id": f"soak-{c}", "tier": "enterprise"}
            )
            assert status == 201, body
            keys.append(body["api_key"])
            status, hook, _ = Client(port, body["api_key"]).call(
                "POST", "/webhooks", {"url": receiver_url, "events": ["*"]}
            )
            assert status == 201, hook
            hooks.append(hook["webhook_id"])
        stats: dict = {
            "status": Counter(),
            "latency": {},
            "when": {},
            "verify_reads": [],
            "errors": [],
            "hostile": Counter(),
        }
        lock = threading.Lock()
        stop = threading.Event()
        threads = [
            threading.Thread(target=traffic, args=(port, keys[i % len(keys)], stop, i + 1, stats, lock))
            for i in range(args.clients)
        ]
        hostile_keys: list[str] = []
        if args.hostile:
            # Two keys: the floods (slow batches, trickled bodies) keep "hostile" at its share of the
            # threads, where every further request of it answers 429 at once; the bodies go under
            # "hostile-bodies", so that they are read, validated and (-0.0) stored.
            for customer_id in ("hostile", "hostile-bodies"):
                status, body, _ = admin.call(
                    "POST", "/admin/api-keys", {"customer_id": customer_id, "tier": "pilot"}
                )
                assert status == 201, body
                hostile_keys.append(body["api_key"])
            floods, bodies = hostile_keys
            threads.append(threading.Thread(target=hostile, args=(port, bodies, stop, stats, lock, keys[0])))
            threads += [
                threading.Thread(target=slow_bodies, args=(port, floods, stop, stats, lock)) for _ in range(8)
            ]
            threads += [
                threading.Thread(target=slow_batches, args=(port, floods, stop, stats, lock))
                for _ in range(40)
            ]
        started = time.time()
        for t in threads:
            t.start()
        time.sleep(args.minutes * 30)
        victims = [] if args.no_kill else worker_pids(serve.pid)
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        report["worker_killed_at_s"] = round(time.time() - started) if victims else None
        time.sleep(args.minutes * 30)
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.time() - started
        report["load_average_at_end"] = os.getloadavg()
        report["cpu_seconds_of_traffic"] = cpu_seconds(serve.pid)
        report["new_worker"] = [p for p in worker_pids(serve.pid) if p not in victims]
        # The books: every delivery succeeded once, every export completed, every chain verifies.
        settle = time.time() + args.settle_minutes * 60
        while time.time() < settle:
            pending = 0
            for key, hook in zip(keys, hooks, strict=True):
                client = Client(port, key)
                for state in ("pending", "failed"):
                    pending += (
                        client.call("GET", f"/webhooks/{hook}/deliveries?status={state}&limit=1")[1]
                        .get("pagination", {})
                        .get("total", 0)
                    )
                exports = client.call("GET", "/exports?limit=100")[1].get("data", [])
                pending += sum(1 for e in exports if e["status"] in ("queued", "processing"))
            if not pending:
                break
            time.sleep(2)
        delivered, exports_done, exports_failed, chains = 0, 0, 0, []
        for key, hook in zip(keys, hooks, strict=True):
            client = Client(port, key)
            delivered += client.call("GET", f"/webhooks/{hook}/deliveries?status=succeeded&limit=1")[1][
                "pagination"
            ]["total"]
            for page in range(1, 50):
                data = client.call("GET", f"/exports?limit=100&page={page}")[1].get("data", [])
                exports_done += sum(1 for e in data if e["status"] == "completed")
                exports_failed += sum(1 for e in data if e["status"] == "failed")
                if len(data) < 100:
                    break
            chains.append(client.call("GET", "/audit-trail/verify")[1])
        for hostile_key in hostile_keys:  # the -0.0 entries are in hostile-bodies' chain
            chains.append(Client(port, hostile_key).call("GET", "/audit-trail/verify")[1])
        requests = sum(stats["status"].values())
        report.update(
            {
                "minutes": round(elapsed / 60, 1),
                "clients": args.clients,
                "requests": requests,
                "requests_per_s": round(requests / elapsed, 1),
                "status_codes": dict(stats["status"]),
                "server_errors": stats["errors"][:20],
                "hostile_answers": dict(sorted(stats["hostile"].items())),
                "database": "postgresql+redis" if args.database_url else "embedded",
                "latency_ms": {op: percentiles(v) for op, v in sorted(stats["latency"].items())},
                # every plain client's call together: what --hostile must not slow down
                "plain_latency_ms": percentiles([x for v in stats["latency"].values() for x in v]),
                # the five slowest calls of each endpoint: (second of the run, ms)
                "slowest": {
                    op: sorted(v, key=lambda call: -call[1])[:5] for op, v in sorted(stats["when"].items())
                },
                # verify calls: (second of the run, ms, entries read), the slowest ten and the most read
                "verify_slowest": sorted(stats["verify_reads"], key=lambda call: -call[1])[:10],
                "verify_most_read": max((call[2] for call in stats["verify_reads"]), default=0),
                "settled_after_s": round(time.time() - (settle - args.settle_minutes * 60)),
                "deliveries_succeeded": delivered,
                "webhook_ids_received": len(Receiver.ids),
                "duplicates_received": sum(n - 1 for n in Receiver.ids.values() if n > 1),
                "still_pending_after_settle": pending,
                "exports_completed": exports_done,
                "exports_failed": exports_failed,
                "chains": [
                    {"valid": c.get("valid"), "entries_checked": c.get("entries_checked")} for c in chains
                ],
                "serve_log_tracebacks": (data_dir / "serve.log").read_text().count("Traceback"),
                # config/api.py logs each 503 of a locked or unreachable database (the SQLite
                # writer busy past its timeout); a group-commit 503 is not logged
                "serve_log_database_unavailable": (data_dir / "serve.log")
                .read_text()
                .count("database unavailable"),
                # 5xx by (endpoint, status, problem code, start of detail)
                "server_error_kinds": [
                    [*kind, count] for kind, count in Counter(stats["errors"]).most_common()
                ],
            }
        )
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
        receiver.shutdown()
        log.close()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
