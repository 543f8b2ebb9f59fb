# ruff: noqa: S608 -- the only SQL here is built from this script's constants
"""Ingestion benchmark: POST /log/batch, POST /log and POST /calibrate against the plain-psycopg
limit of the chained insert (bench/baselines/limit_insert.py), measured in the same run and
printed side by side as ratios.

Run:  .venv/bin/python bench/ingest_bench.py                     (PostgreSQL + Redis on localhost)
      .venv/bin/python bench/ingest_bench.py --duration 20 --big 1000000
      .venv/bin/python bench/ingest_bench.py --reuse --big 1000000   (the database an earlier run loaded)

Needs the perf venv (python3 -m venv /tmp/perf-venv && /tmp/perf-venv/bin/pip install -r
bench/baselines/requirements.txt). It creates a fresh database `tc_ingest_bench`, starts gunicorn
(gthread, 2 workers x 8 threads: one per core) against it and Redis db 13 (BENCH_DB and
BENCH_REDIS_DB choose others), and, all for ONE customer:
1. limit_insert --threads 1 and --threads 4 and limit_batch (again after step 2) on the same PostgreSQL;
2. loads --small decisions (10,000) with 1,000-item batches from one client: decisions/s (the
   tables ANALYZEd first, once a warm-up wrote rows: autovacuum is off on these machines);
3. POST /calibrate paced open loop (latency from the scheduled start) at --rate req/s, or by default
   at --rate-of-limit (0.5) of the same run's limit_insert --threads 4: a fixed rate near what the
   plain insert itself sustains on a loaded machine measures the machine, not the service;
4. POST /log, closed loop, 16 connections, driven by wrk (--client; bench/log_wrk.lua), with the CPU
   per request of the gunicorn processes, their database backends and the client;
5. loads up to --big stored decisions with batches (4 clients; the row says how long the load
   took), runs VACUUM (ANALYZE) and CHECKPOINT (timed: what autovacuum and the checkpointer would
   otherwise do during the next measurement), then --small decisions in 1,000-item batches from
   one client again, POST /calibrate at the same rate and POST /log closed loop again, all at that size;
6. GET /audit-trail/verify?full=true as a job must say valid (the whole chain, every hash);
7. the CPU time of one POST /log in-process (bench/log_cpu.py), and with --before-tree DIR the
   same for an earlier checkout (`git archive <commit> | tar -x -C DIR`) on its own database.
The other phases' load generator is an asyncio HTTP/1.1 client in this process.
"""

import argparse
import asyncio
import functools
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchenv import fresh_stack, make_keys, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PERF = Path(os.environ.get("BENCH_PERF_DIR", ROOT / "bench" / "baselines"))
DB = os.environ.get("BENCH_DB", "tc_ingest_bench")
REDIS_DB = os.environ.get("BENCH_REDIS_DB", "13")
PORT = int(os.environ.get("BENCH_PORT", "8857"))
CUSTOMER = "bench"
# Each run's decision ids are its own, so that a run on a kept database (--reuse) writes new
# decisions instead of replaying the earlier run's.
RUN = f"r{int(time.time())}"
DSN = f"postgresql://postgres@127.0.0.1:5432/{DB}"


def sh(*args: str, env=None, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=env, check=check, capture_output=True, text=True)


def psql(sql: str) -> str:
    return sh("psql", "-h", "127.0.0.1", "-U", "postgres", "-d", DB, "-qAt", "-c", sql).stdout.strip()


def limit_insert(threads: int, seconds: float, perf_python: str) -> dict:
    out = sh(perf_python, str(PERF / "limit_insert.py"), "--dsn", DSN, "--threads", str(threads),
             "--seconds", str(seconds)).stdout  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])


def limit_batch(seconds: float, perf_python: str) -> dict:
    """The plain set-wise limit (bench/baselines/limit_batch.py): one transaction per 1,000
    decisions, the chain head locked, the decisions and the chained entries COPYed."""
    out = sh(perf_python, str(PERF / "limit_batch.py"), "--dsn", DSN, "--seconds", str(seconds))
    return json.loads(out.stdout.strip().splitlines()[-1])


def decision(i: int, tag: str, rnd: random.Random) -> dict:
    ai = rnd.choice(("approve", "deny"))
    return {
        "decision_id": f"{RUN}-{tag}-{i}",
        "user_id": f"user-{i % 200}",
        "model_id": f"model-{i % 5}",
        "model_version": "1",
        "ai_recommendation": ai,
        "ai_confidence": round(rnd.random(), 3),
        "user_decision": ai if rnd.random() < 0.75 else "other",
        "context": "ingest bench",
        "subgroups": {"gender": rnd.choice("fm"), "age_group": rnd.choice(["18-30", "31-50", "51+"])},
    }


# --- an HTTP/1.1 keep-alive client on asyncio ------------------------------------------------------


async def _request(
    conn: list, method: str, path: str, key: str, body: bytes, headers: str = ""
) -> tuple[int, bytes]:
    """One request on the kept-alive connection `conn` (opened, or opened again once, as needed);
    `headers`: more header lines, each ending in CRLF."""
    for _attempt in range(2):
        try:
            if not conn:
                conn.extend(await asyncio.open_connection("127.0.0.1", PORT))
            reader, writer = conn
            writer.write(
                (
                    f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Authorization: Bearer {key}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                ).encode()
                + body
            )
            await writer.drain()
            status_line = await reader.readline()
            if not status_line:
                raise ConnectionError("closed")
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            return int(status_line.split()[1]), await reader.readexactly(length)
        except (ConnectionError, asyncio.IncompleteReadError):
            conn.clear()
    return 0, b""


def _summary(latencies: list[float], elapsed: float, errors: int, count: int | None = None) -> dict:
    latencies.sort()
    n = len(latencies)
    return {
        "rps": (count if count is not None else n) / elapsed,
        "p50": latencies[n // 2] if n else 0.0,
        "p99": latencies[max(0, int(n * 0.99) - 1)] if n else 0.0,
        "errors": errors,
    }


async def _closed_loop(path: str, keys: list[str], *, connections: int, duration: float, tag: str) -> dict:
    latencies: list[float] = []
    errors = 0
    stop = time.perf_counter() + duration
    counter = iter(range(10**9))

    async def worker(w: int) -> None:
        nonlocal errors
        conn: list = []
        rnd = random.Random(w)
        while time.perf_counter() < stop:
            i = next(counter)
            body = json.dumps(decision(i, f"{tag}{w}", rnd)).encode()
            started = time.perf_counter()
            status, _ = await _request(conn, "POST", path, keys[i % len(keys)], body)
            latencies.append((time.perf_counter() - started) * 1000)
            errors += status not in (200, 201)

    started = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(connections)))
    return _summary(latencies, time.perf_counter() - started, errors)


async def _open_loop(
    path: str, keys: list[str], *, rate: float, duration: float, tag: str, trace: list | None = None
) -> dict:
    """`rate` requests a second for `duration` s; with `trace`, each request is tagged `X-Bench-I: i`
    (bench/tail_gunicorn.py) and its (scheduled, read) times (time.perf_counter) are appended."""
    total = int(rate * duration)
    queue: asyncio.Queue = asyncio.Queue()
    latencies: list[float] = []
    errors = 0

    async def worker(w: int) -> None:
        nonlocal errors
        conn: list = []
        rnd = random.Random(w)
        while (item := await queue.get()) is not None:
            i, scheduled = item
            body = json.dumps(decision(i, tag, rnd)).encode()
            tagged = f"X-Bench-I: {i}\r\n" if trace is not None else ""
            status, _ = await _request(conn, "POST", path, keys[i % len(keys)], body, tagged)
            read = time.perf_counter()
            latencies.append((read - scheduled) * 1000)
            errors += status not in (200, 201)
            if trace is not None:
                trace.append((scheduled, read))

    workers = [asyncio.create_task(worker(w)) for w in range(64)]
    start = time.perf_counter() + 0.2
    for i in range(total):
        at = start + i / rate
        if (delay := at - time.perf_counter()) > 0:
            await asyncio.sleep(delay)
        queue.put_nowait((i, at))
    for _ in workers:
        queue.put_nowait(None)
    await asyncio.gather(*workers)
    return _summary(latencies, time.perf_counter() - start, errors)


async def _batches(keys: list[str], *, first: int, last: int, clients: int, size: int = 1000) -> dict:
    """Decisions first..last in 1,000-item batches from `clients` clients: decisions/s."""
    starts = list(range(first, last + 1, size))
    latencies: list[float] = []
    errors = 0

    async def client(c: int) -> None:
        nonlocal errors
        conn: list = []
        rnd = random.Random(c)
        for n, start in enumerate(starts[c::clients]):
            items = [decision(i, "batch", rnd) for i in range(start, min(last, start + size - 1) + 1)]
            body = json.dumps({"decisions": items}).encode()
            began = time.perf_counter()
            status, answer = await _request(conn, "POST", "/v1/log/batch", keys[(c + n) % len(keys)], body)
            latencies.append((time.perf_counter() - began) * 1000)
            if status != 200:
                errors += len(items)
            else:
                errors += json.loads(answer)["rejected"]

    began = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    result = _summary(latencies, time.perf_counter() - began, errors, count=last - first + 1)
    result["batches"] = len(starts)
    return result


def _log_cpu(env: dict, requests: int, root: str | None) -> dict:
    """CPU ms per POST /log in-process, with the server stopped (bench/log_cpu.py), run from
    the checkout it measures."""
    extra = ["--root", root] if root else []
    out = subprocess.run(
        [str(BIN / "python"), str(ROOT / "bench" / "log_cpu.py"), "--requests", str(requests), *extra],
        cwd=root or ROOT, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _before_env(env: dict, tree: str) -> dict:
    """A fresh database migrated by the earlier checkout."""
    before = {**env, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB}_before"}
    sh("psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f'DROP DATABASE IF EXISTS "{DB}_before"',
       "-c", f'CREATE DATABASE "{DB}_before"')  # fmt: skip
    subprocess.run([str(BIN / "python"), "manage.py", "migrate", "-v0"], cwd=tree, env=before, check=True)
    return before


def _wrk_log(keys: list[str], *, connections: int, duration: float, tag: str) -> dict:
    """POST /log closed loop driven by wrk (one thread, `connections` connections; bench/log_wrk.lua
    makes the bodies): a C client spends a fraction of the asyncio client's CPU per request on the
    cores the service shares with it. `client_cpu_ms` is wrk's own CPU per request."""
    script = Path(__file__).resolve().parent / "log_wrk.lua"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = sh("wrk", "-t1", f"-c{connections}", f"-d{duration:g}s", "--timeout", "10s", "-s", str(script),
             f"http://127.0.0.1:{PORT}/v1/log", "--", f"{RUN}-{tag}", *keys).stdout  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = json.loads(out.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "rps": r["requests"] / r["seconds"],
        "p50": r["p50"],
        "p99": r["p99"],
        "errors": r["non_2xx"] + r["socket_errors"],
        "client_cpu_ms": cpu / max(1, r["requests"]) * 1000,
    }


def _asyncio_log(keys: list[str], *, connections: int, duration: float, tag: str) -> dict:
    """The same closed loop from this process's asyncio client, with its CPU per request."""
    cpu, wall = time.process_time(), time.perf_counter()
    r = asyncio.run(_closed_loop("/v1/log", keys, connections=connections, duration=duration, tag=tag))
    requests = r["rps"] * (time.perf_counter() - wall)
    return {**r, "client_cpu_ms": (time.process_time() - cpu) / max(1.0, requests) * 1000}


def _cpu_seconds(pids: list[int]) -> dict[int, float]:
    """utime + stime of each process still alive (/proc/<pid>/stat, in clock ticks)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _server_pids(web: subprocess.Popen) -> list[int]:
    """gunicorn's master and workers, and the database's client backends (PostgreSQL on this
    host); not Redis nor PostgreSQL's background processes, which serve others too."""
    children = Path(f"/proc/{web.pid}/task/{web.pid}/children").read_text().split()
    backends = psql(
        f"SELECT pid FROM pg_stat_activity WHERE datname = '{DB}' AND backend_type = 'client backend'"
    )
    return [web.pid, *map(int, children), *map(int, backends.split())]


def _with_cpu(web: subprocess.Popen, run: Callable[[], dict], duration: float) -> dict:
    """run()'s figures with the CPU per request of the web processes and of the backends."""
    web_pids = {web.pid, *map(int, Path(f"/proc/{web.pid}/task/{web.pid}/children").read_text().split())}
    before = _cpu_seconds(_server_pids(web))
    r = run()
    after = _cpu_seconds(_server_pids(web))
    requests = max(1.0, r["rps"] * duration)
    spent = {pid: after[pid] - before.get(pid, 0.0) for pid in after}
    return {
        **r,
        "web_cpu_ms": sum(v for pid, v in spent.items() if pid in web_pids) / requests * 1000,
        "backend_cpu_ms": sum(v for pid, v in spent.items() if pid not in web_pids) / requests * 1000,
    }


def row(name: str, r: dict, limit: float | None = None) -> str:
    ratio = f"{r['rps'] / limit:>8.2f}" if limit else f"{'':>8}"
    return f"{name:<62}{r['rps']:>9.0f}{ratio}{r['p50']:>9.1f}{r['p99']:>9.1f}{r['errors']:>8}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=float, default=15)
    parser.add_argument("--rate", type=float, help="POST /calibrate's pace, req/s (default: --rate-of-limit)")
    parser.add_argument(
        "--rate-of-limit",
        type=float,
        default=0.5,
        help="without --rate, pace POST /calibrate at this fraction of limit_insert --threads 4's tx/s",
    )
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    # Two cores: one worker per core; threads are what group commit gathers concurrent requests from.
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--cpu-requests", type=int, default=1000)
    parser.add_argument(
        "--before-tree",
        help="an earlier checkout (git archive) whose in-process POST /log CPU to measure too",
    )
    parser.add_argument("--perf-python", default="/tmp/perf-venv/bin/python")
    parser.add_argument(
        "--client",
        choices=["wrk", "asyncio", "both"],
        default="wrk",
        help="what drives the POST /log closed loop: wrk (the aim's client), this process's asyncio "
        "client (the runs before), or both, one after the other",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the bench database as an earlier run left it (migrated, its decisions kept): "
        "measures /calibrate at --big stored without loading them again",
    )
    args = parser.parse_args()
    load_before = os.getloadavg()

    data_dir = Path(tempfile.mkdtemp(prefix="tc-ingest-bench-"))
    env = fresh_stack(db=DB, redis_db=REDIS_DB, data_dir=data_dir, keep=args.reuse)
    env["TRUSTCAL_THREAD_SHARE"] = "0"  # one customer here: it may use every thread
    keys = make_keys(env, customer=CUSTOMER, count=48)

    limit1 = limit_insert(1, args.duration, args.perf_python)
    limit4 = limit_insert(4, args.duration, args.perf_python)
    print(
        f"limit_insert --threads 1: {limit1['tx_per_s']} tx/s; --threads 4: {limit4['tx_per_s']} tx/s",
        flush=True,
    )
    l1, l4 = float(limit1["tx_per_s"]), float(limit4["tx_per_s"])
    rate = args.rate or round(args.rate_of_limit * l4, 1)
    print(f"POST /calibrate paced at {rate} req/s", flush=True)
    limit_b = [float(limit_batch(args.duration, args.perf_python)["decisions_per_s"])]
    print(f"limit_batch: {limit_b[0]} decisions/s", flush=True)

    web = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{PORT}", "--workers",
         str(args.workers), "--threads", str(args.threads), "--worker-class", "gthread", "--keep-alive", "30",
         "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    results: list[str] = []

    def stored() -> int:
        return int(
            psql(f"SELECT coalesce(max(decisions), 0) FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'")
        )

    try:
        wait_healthy(f"http://127.0.0.1:{PORT}")
        asyncio.run(_closed_loop("/v1/log", keys, connections=4, duration=2, tag="warm"))
        # Autovacuum is off on the bench machines: the statistics a deployment's autovacuum would
        # have taken once the warm-up wrote its rows (one customer holds them all), so the stored
        # decisions' read is planned on them, not on a table never analysed.
        psql("ANALYZE")
        batch = asyncio.run(_batches(keys, first=1, last=args.small, clients=1))
        # The plain set-wise limit again right after, while the web processes idle: the batch's
        # ratio is over the mean of the two (this machine's fsync cost drifts within a run).
        limit_b.append(float(limit_batch(args.duration, args.perf_python)["decisions_per_s"]))
        lb = sum(limit_b) / len(limit_b)
        results.append(
            row(f"POST /log/batch x1,000, one client: decisions/s ({batch['batches']} batches)", batch, lb)
        )
        print(results[-1], flush=True)
        n = stored()
        cal = asyncio.run(_open_loop("/v1/calibrate", keys, rate=rate, duration=args.duration, tag="cal1"))
        results.append(row(f"POST /calibrate at {rate:.0f} req/s open loop ({n:,} stored)", cal, rate))
        print(results[-1], flush=True)
        clients = {"wrk": _wrk_log, "asyncio": _asyncio_log}

        def log_phase(phase: str) -> None:
            """POST /log closed loop with each client, at the size stored now."""
            at = stored()
            for client in ("wrk", "asyncio") if args.client == "both" else (args.client,):
                log = _with_cpu(
                    web,
                    functools.partial(
                        clients[client],
                        keys,
                        connections=args.connections,
                        duration=args.duration,
                        tag=f"log{client}{phase}",
                    ),
                    args.duration,
                )
                results.append(
                    row(f"POST /log closed loop, {args.connections} conn., {client} ({at:,} stored)", log, l4)
                )
                print(results[-1], flush=True)
                results.append(
                    f"  CPU ms per request: web processes {log['web_cpu_ms']:.2f}, their database backends "
                    f"{log['backend_cpu_ms']:.2f}, the client {log['client_cpu_ms']:.2f}"
                )
                print(results[-1], flush=True)

        log_phase("small")
        n = stored()
        if args.big > n:
            began = time.perf_counter()
            big = asyncio.run(_batches(keys, first=10**7, last=10**7 + args.big - n - 1, clients=4))
            loaded = time.perf_counter() - began
            results.append(
                row(f"POST /log/batch x1,000, 4 clients, to {args.big:,} in {loaded:.0f} s", big, lb)
            )
            print(results[-1], flush=True)
            # What autovacuum and the checkpointer would do to the freshly loaded tables in the next
            # minutes, done now and timed: the second /calibrate run measures the service at that
            # size, not PostgreSQL catching up with the load.
            began = time.perf_counter()
            psql("VACUUM (ANALYZE)")
            psql("CHECKPOINT")
            print(f"settle (VACUUM ANALYZE, CHECKPOINT): {time.perf_counter() - began:.0f} s", flush=True)
        n = stored()
        # One client's 1,000-item batches again, at this size: the index maintenance a batch pays
        # grows with the tables.
        at_big = asyncio.run(_batches(keys, first=2 * 10**7, last=2 * 10**7 + args.small - 1, clients=1))
        results.append(
            row(f"POST /log/batch x1,000, one client ({n:,} stored, {at_big['batches']} batches)", at_big, lb)
        )
        print(results[-1], flush=True)
        n = stored()
        cal = asyncio.run(_open_loop("/v1/calibrate", keys, rate=rate, duration=args.duration, tag="cal2"))
        results.append(row(f"POST /calibrate at {rate:.0f} req/s open loop ({n:,} stored)", cal, rate))
        print(results[-1], flush=True)
        log_phase("big")  # POST /log again at this size
        job = json.loads(
            sh(str(BIN / "python"), "manage.py", "shell", "-v0", "-c",
               "import json\nfrom keys.models import Customer\nfrom audit import selectors\n"
               f"c = Customer.objects.get(pk='{CUSTOMER}')\nprint(json.dumps(selectors.chain_verify(c).as_dict()))",
               env=env).stdout.strip().splitlines()[-1]
        )  # fmt: skip
    finally:
        web.terminate()
        web.wait()
    cpu = _log_cpu(env, args.cpu_requests, None)
    cpu_before = (
        _log_cpu(_before_env(env, args.before_tree), args.cpu_requests, args.before_tree)
        if args.before_tree
        else None
    )
    load_after = os.getloadavg()
    print()
    print(f"gunicorn gthread {args.workers} x {args.threads}, PostgreSQL + Redis, one customer; load average "
          f"before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")  # fmt: skip
    print(
        f"limits (plain psycopg, same run): limit_insert --threads 1 {l1:.0f} tx/s, --threads 4 {l4:.0f} tx/s; "
        f"limit_batch {' and '.join(f'{v:.0f}' for v in limit_b)} decisions/s (before and after the batches)"
    )
    print(f"{'run':<62}{'/s':>9}{'ratio':>8}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
    print("\n".join(results))
    print("(ratio: batch decisions/s over limit_batch's mean; POST /log req/s over limit_insert --threads 4)")
    print(f"full chain verification: {job}")
    print(f"CPU per POST /log in-process (bench/log_cpu.py, {args.cpu_requests} requests): {cpu['cpu_ms_per_request']} ms"
          + (f"; before ({args.before_tree}): {cpu_before['cpu_ms_per_request']} ms" if cpu_before else ""))  # fmt: skip


if __name__ == "__main__":
    main()
