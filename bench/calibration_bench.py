# ruff: noqa: S608 -- the SQL here is built from constants of this script (bulk seeding), never from input
"""POST /log, POST /calibrate and POST /trust-score under load, at 10,000 and 1,000,000 stored decisions.

Run:  .venv/bin/python bench/calibration_bench.py            (PostgreSQL + Redis on localhost, wrk installed)
      .venv/bin/python bench/calibration_bench.py --db tc_x --redis-db 8 --port 8500 --rate 150 --big 1000000

What it does, against a fresh database (`--db`, default `tc_audit_bench`; Redis DB `--redis-db`, default 4), with gunicorn
(gthread, --workers/--threads below) on PostgreSQL + Redis:
1. seeds 10,000 decisions for customer `bench` with bulk SQL (bench/calibration_seed.py: decisions
   with confidences, outcomes and initial decisions, audit entries with placeholder hashes, chain
   head, every column of the daily aggregates, the Merkle tree over the seeded entries);
2. closed loop, maximum throughput: wrk (-t2, Lua script rotating 48 enterprise keys so
   the per-key token buckets never run dry) on POST /log, then POST /calibrate;
3. open loop at a fixed rate (`--rate`, default 200 req/s): a bounded asyncio client (64 keep-alive
   connections; each request is scheduled at t0 + i/rate and its latency is measured from
   that scheduled time, so queueing behind a slow server counts) on POST /log, then on
   POST /calibrate (steps 2 and 3 are skipped with `--no-small`);
4. seeds up to --big decisions (default 1,000,000) with the same bulk SQL, checks the seeded
   aggregates against the service's rule (calibration_seed.seed_check), and at that size runs,
   each beside its plain-tool limit measured in the same minutes (bench/baselines/):
   POST /calibrate at --rate (limit: the chained insert, limit_insert.py at the same rate),
   POST /trust-score for a user at --rate and for the organisation at --trust-rate (limit:
   the same reads in plain SQL, limit_trust.py at the same rates), then POST /log at --rate and
   the in-process service times.
All requests go to ONE customer, the worst case for the per-customer chain-head lock.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import calibration_load
import calibration_seed
from benchenv import fresh_stack, make_keys
from calibration_load import PORT, open_loop, wrk, wrk_script
from calibration_seed import CUSTOMER, seed, seed_check

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DB = "tc_audit_bench"  # --db
REDIS_DB = "4"  # --redis-db
PERF = Path(os.environ.get("BENCH_PERF_DIR", ROOT / "bench" / "baselines"))
PERF_PYTHON = sys.executable  # --perf-python: the baselines need psycopg only


def DSN() -> str:
    return f"postgresql://postgres@127.0.0.1:5432/{DB}"


def psql(sql: str) -> str:
    return calibration_seed.psql(DB, sql)


def stored() -> int:
    return int(psql(f"SELECT decisions FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'").strip() or 0)


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def limit(script: str, *args: str) -> dict:
    """A plain-tool limit of bench/baselines/ on this run's database, now (its last line, JSON)."""
    done = subprocess.run([PERF_PYTHON, str(PERF / script), "--dsn", DSN(), *args], cwd=ROOT, check=True,
                          capture_output=True, text=True)  # fmt: skip
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return {"rps": out.get("tx_per_s") or out.get("calls_per_s") or 0, "p50": out["p50_ms"],
            "p99": out["p99_ms"], "errors": out.get("errors", 0)}  # fmt: skip


INPROCESS = """
import json, time
from django.conf import settings
from rest_framework.test import APIClient
settings.RATE_LIMITS_ENABLED = False
client = APIClient()
client.credentials(HTTP_AUTHORIZATION="Bearer " + KEY)
out = {}
for scope, body in (("organisation", {}), ("user", {"user_id": "user-7"})):
    samples = []
    for i in range(TRUST_N):  # the organisation's: figures, risk users and confidence check over 90 days
        started = time.perf_counter()
        assert client.post("/v1/trust-score", body, format="json").status_code == 200
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    out[f"/v1/trust-score ({scope})"] = {"rps": 1000 / (sum(samples) / TRUST_N), "p50": samples[TRUST_N // 2],
                                         "p99": samples[-1 - TRUST_N // 100], "errors": 0}
# where the organisation's time goes: its three reads (and the Python over their rows), each alone
from calibration import reporting, selectors
from calibration.windows import day_bounds as _day_bounds
from calibration.windows import decisions_of as _decisions
from keys.models import Customer
customer = Customer.objects.get(pk="bench")
days = selectors.DayRange.last_days(90)
parts = {
    "organisation figures (selectors.organization_figures)": lambda: selectors.organization_figures(customer, days=days),
    "risk users (selectors.risk_users)": lambda: selectors.risk_users(customer, days=days),
    "confidence check (reporting.decisions_confidence_check)": lambda: reporting.decisions_confidence_check(
        _decisions(customer, _day_bounds(days), user_id=None, model_id=None)),
}
for name, part in parts.items():
    samples = []
    for i in range(max(10, TRUST_N // 5)):
        started = time.perf_counter()
        part()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    out[f"  of which {name}"] = {"rps": 1000 / (sum(samples) / len(samples)), "p50": samples[len(samples) // 2],
                                 "p99": samples[-1], "errors": 0}
for path in ("/v1/calibrate", "/v1/log"):
    samples = []
    for i in range(N):
        body = {"user_id": f"user-{i % 200}", "model_id": f"model-{i % 5}", "ai_recommendation": "approve",
                "user_decision": "approve" if i % 4 else "deny", "confidence": (i % 100) / 100, "context": "in-process"}
        started = time.perf_counter()
        assert client.post(path, body, format="json").status_code in (200, 201)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    out[path] = {"rps": 1000 / (sum(samples) / N), "p50": samples[N // 2], "p99": samples[int(N * 0.99) - 1], "errors": 0}
print("RESULT" + json.dumps(out))
"""


def inprocess(env: dict, key: str, n: int = 300, trust_n: int = 100) -> dict:
    """One client, in-process (no HTTP, no queueing): the service time of one request."""
    code = f"KEY = {key!r}\nN = {n}\nTRUST_N = {trust_n}\n" + INPROCESS
    out = calibration_seed.django(env, code)
    return json.loads(out.split("RESULT", 1)[1])


def row(name: str, r: dict) -> str:
    return f"{name:<64}{r['rps']:>9.0f}{r['p50']:>9.1f}{r['p99']:>9.1f}{r['errors']:>8}"


def phase(results: list[str], name: str, r: dict) -> None:
    bad = {status: n for status, n in r.get("statuses", {}).items() if status not in (200, 201)}
    results.append(row(name, r) + f"  load {load_average()}" + (f"  non-2xx {bad}" if bad else ""))
    print(results[-1], flush=True)


def small_phases(args: argparse.Namespace, keys: list[str], script: Path, results: list[str]) -> None:
    d = args.duration
    wrk("/v1/log", script, duration=3, connections=args.connections)  # warm up
    for path in ("/v1/log", "/v1/calibrate"):
        phase(results, f"POST {path}, wrk closed loop -c{args.connections}",
              wrk(path, script, duration=d, connections=args.connections))  # fmt: skip
    for path in ("/v1/log", "/v1/calibrate"):
        phase(results, f"POST {path} at {args.rate:.0f} req/s open loop ({stored():,} stored)",
              open_loop(path, keys, rate=args.rate, duration=d))  # fmt: skip


def big_phases(args: argparse.Namespace, keys: list[str], results: list[str]) -> None:
    d, rate, trust_rate = args.duration, args.rate, args.trust_rate
    open_loop("/v1/calibrate", keys, rate=rate, duration=3)  # warm up (not counted): every worker answers
    n = f"{stored():,} stored"
    phase(results, f"limit_insert.py --threads 4 --rate {rate:.0f}",
          limit("limit_insert.py", "--threads", "4", "--rate", str(rate), "--seconds", str(d)))  # fmt: skip
    phase(results, f"POST /v1/calibrate at {rate:.0f} req/s open loop ({n})",
          open_loop("/v1/calibrate", keys, rate=rate, duration=d))  # fmt: skip
    phase(results, f"limit_trust.py --user user-7 --rate {rate:.0f}",
          limit("limit_trust.py", "--user", "user-7", "--rate", str(rate), "--seconds", str(d)))  # fmt: skip
    phase(results, f"POST /v1/trust-score user at {rate:.0f} req/s open loop ({n})",
          open_loop("/v1/trust-score", keys, rate=rate, duration=d,
                    body_of=lambda i: {"user_id": f"user-{i * 7 % 1000}"}))  # fmt: skip
    phase(results, f"limit_trust.py (organisation) --rate {trust_rate:g}",
          limit("limit_trust.py", "--rate", str(trust_rate), "--seconds", str(d)))  # fmt: skip
    phase(results, f"POST /v1/trust-score organisation at {trust_rate:g} req/s ({n})",
          open_loop("/v1/trust-score", keys, rate=trust_rate, duration=d, body_of=lambda i: {}))  # fmt: skip
    phase(results, f"POST /v1/log at {rate:.0f} req/s open loop ({stored():,} stored)",
          open_loop("/v1/log", keys, rate=rate, duration=d))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--trust-rate", type=float, default=10, help="POST /trust-score (organisation) req/s")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections (closed loop)")
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--no-small", action="store_true", help="no HTTP phases at --small stored")
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--db", default=DB, help="the database to drop, create and load")
    parser.add_argument("--redis-db", default=REDIS_DB)
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument(
        "--thread-share", default="0", help="TRUSTCAL_THREAD_SHARE (0: off, one customer here)"
    )
    parser.add_argument("--perf-python", default=PERF_PYTHON, help="the python of the baselines (psycopg)")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep --db as an earlier run left it (migrated; no seed if it holds --big)",
    )
    args = parser.parse_args()
    calibration_load.PORT = args.port
    globals().update(DB=args.db, PERF_PYTHON=args.perf_python)  # psql(), DSN() and limit() read them
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install -y wrk")
    print(f"load average at the start: {load_average()}", flush=True)
    data_dir = Path(tempfile.mkdtemp(prefix="tc-audit-bench-"))
    env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=data_dir, keep=args.reuse)
    env["TRUSTCAL_THREAD_SHARE"] = args.thread_share  # the one customer may use every thread
    keys = make_keys(env, customer=CUSTOMER, count=48)

    started = time.perf_counter()
    if not args.reuse or stored() < args.small:
        seed(args.db, env, 1, args.small)
        print(f"seeded {args.small:,} decisions in {time.perf_counter() - started:.1f} s", flush=True)
    results: list[str] = []
    if not args.no_small:
        for path, r in inprocess(env, keys[0]).items():
            phase(results, f"{path} in-process, one client ({args.small:,} stored)", r)
    web = calibration_load.gunicorn_start(env, workers=args.workers, threads=args.threads)
    try:
        if not args.no_small:
            small_phases(args, keys, wrk_script(data_dir / "log.lua", keys, "wrk"), results)
        started = time.perf_counter()
        first = args.small + 1
        target = args.small + max(0, args.big - stored())
        if args.reuse and stored() >= args.big:
            target = 0  # the kept database already holds --big decisions
        while first <= target:
            last = min(target, first + 250_000 - 1)
            seed(args.db, env, first, last)
            first = last + 1
        print(f"seeded up to {stored():,} decisions in {time.perf_counter() - started:.1f} s", flush=True)
        seed_check(env)
        started = time.perf_counter()
        psql("VACUUM (ANALYZE)")
        psql("CHECKPOINT")
        print(f"VACUUM (ANALYZE) and CHECKPOINT in {time.perf_counter() - started:.1f} s", flush=True)
        big_phases(args, keys, results)
        for path, r in inprocess(env, keys[0]).items():
            phase(results, f"{path} in-process, one client ({stored():,} stored)", r)
    finally:
        web.terminate()
        web.wait()
    print()
    print(
        f"gunicorn gthread {args.workers} workers x {args.threads} threads, PostgreSQL + Redis, one customer"
    )
    print(f"{'run':<64}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
    print("\n".join(results))
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
