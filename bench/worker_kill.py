"""Web workers SIGKILLed under a steady closed-loop load: how many requests fail (reset,
refused, timed out) and how long the answers stall, with gunicorn.conf.py as it is.

    .venv/bin/python bench/worker_kill.py --db tc_kill --redis-db 5 --port 8600
    .venv/bin/python bench/worker_kill.py ... --root ../other-checkout   # gunicorn runs that checkout

gunicorn as bench/ingest_bench.py runs it (gthread, 4 workers x 2 threads, PostgreSQL + Redis),
started from the repository's folder so it reads gunicorn.conf.py. `--clients` threads each
send GET /v1/health on a new connection, one after another; every `--every` seconds one booted
worker is SIGKILLed (`--kills` times). The run prints one JSON line: requests, failures by kind, answers over 1 s, p50/p99/max ms, and the longest time
in which no request completed.
"""

import argparse
import itertools
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from benchenv import BIN, ROOT, fresh_stack

REQUEST = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    return [int(c) for t in tasks.iterdir() for c in (t / "children").read_text().split()]


def one_request(port: int, timeout: float) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(REQUEST)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
    except ConnectionResetError:
        return "reset"
    except ConnectionRefusedError:
        return "refused"
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return f"oserror:{exc.errno}"
    if not data.startswith(b"HTTP/1.1 "):
        return "empty" if not data else "garbled"
    status = data[9:12].decode()
    return "ok" if status == "200" else f"http{status}"


def wait_ready(port: int, timeout: float = 180.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if one_request(port, 2) == "ok":
            return
        time.sleep(0.2)
    raise RuntimeError("gunicorn did not answer")


def booted(worker: int, since: dict[int, float], boot_seconds: float) -> bool:
    return time.monotonic() - since.setdefault(worker, time.monotonic()) > boot_seconds


def run(args, env: dict[str, str]) -> dict:
    argv = [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{args.port}",
            "--workers", str(args.workers), "--threads", str(args.threads), "--worker-class", "gthread",
            "--log-level", "error"]  # fmt: skip
    web = subprocess.Popen(argv, cwd=args.root, env=env, start_new_session=True)
    results: list[tuple[float, float, str]] = []
    stop = threading.Event()
    lock = threading.Lock()

    def client() -> None:
        while not stop.is_set():
            start = time.monotonic()
            outcome = one_request(args.port, args.timeout)
            with lock:
                results.append((start, time.monotonic(), outcome))

    try:
        wait_ready(args.port)
        time.sleep(args.settle)  # every worker booted
        since: dict[int, float] = dict.fromkeys(children(web.pid), 0.0)
        threads = [threading.Thread(target=client, daemon=True) for _ in range(args.clients)]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        killed = []
        for _ in range(args.kills):
            time.sleep(args.every)
            # A worker that has served a while: the one the kill is about is a running worker.
            candidates = [w for w in children(web.pid) if booted(w, since, args.boot_seconds)]
            if candidates:
                victim = random.choice(candidates)
                os.kill(victim, signal.SIGKILL)
                killed.append(round(time.monotonic() - began, 1))
        time.sleep(args.every)
        stop.set()
        for thread in threads:
            thread.join(args.timeout + 5)
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        try:
            web.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(web.pid, signal.SIGKILL)
            web.wait()
    outcomes = Counter(r[2] for r in results)
    ok = sorted((end - start) * 1000 for start, end, outcome in results if outcome == "ok")
    ends = sorted(end for _, end, _ in results)
    gaps = [b - a for a, b in itertools.pairwise(ends)]
    return {
        "root": str(args.root),
        "load": os.getloadavg()[0],
        "seconds": round(ends[-1] - ends[0], 1) if ends else 0,
        "kills": killed,
        "requests": len(results),
        "outcomes": dict(outcomes),
        "failed": len(results) - outcomes["ok"],
        "over_1s": sum(1 for ms in ok if ms > 1000),
        "p50_ms": round(statistics.median(ok), 1) if ok else None,
        "p99_ms": round(ok[int(len(ok) * 0.99)], 1) if ok else None,
        "max_ms": round(ok[-1], 1) if ok else None,
        "longest_gap_s": round(max(gaps), 2) if gaps else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", default="tc_worker_kill")
    parser.add_argument("--redis-db", default="5")
    parser.add_argument("--port", type=int, default=8600)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--every", type=float, default=20.0)
    parser.add_argument("--boot-seconds", type=float, default=15.0, help="a worker younger is not killed")
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--keep", action="store_true", help="reuse the database as an earlier run left it")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout gunicorn runs (this venv)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=folder, keep=args.keep)
        print(json.dumps(run(args, env)), flush=True)


if __name__ == "__main__":
    main()
