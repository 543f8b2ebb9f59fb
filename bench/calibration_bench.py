# ruff: noqa: S608 -- the SQL here is built from constants of this script (bulk seeding), never from input
"""POST /log and POST /calibrate under load, and /calibrate latency at 10k vs 1M stored decisions.

Run:  .venv/bin/python bench/calibration_bench.py            (PostgreSQL + Redis on localhost, wrk installed)
      .venv/bin/python bench/calibration_bench.py --duration 30 --rate 200 --big 1000000

What it does, against a fresh database (`--db`, default `tc_audit_bench`; Redis DB `--redis-db`, default 4), with gunicorn
(gthread, --workers/--threads below) on PostgreSQL + Redis:
1. seeds 10,000 decisions for customer `bench` with bulk SQL (generate_series: decisions,
   audit entries, chain head, daily aggregates; the seeded entries carry placeholder
   hashes, so the seeded part of the chain is not meant to verify);
2. closed loop, maximum throughput: wrk (-t2, Lua script rotating 48 enterprise keys so
   the per-key token buckets never run dry) on POST /log, then POST /calibrate;
3. open loop at a fixed rate (default 200 req/s): a bounded asyncio client (64 keep-alive
   connections; each request is scheduled at t0 + i/rate and its latency is measured from
   that scheduled time, so queueing behind a slow server counts) on POST /log, then on
   POST /calibrate;
4. seeds up to --big decisions (default 1,000,000) with the same bulk SQL and repeats the
   fixed-rate POST /calibrate (and POST /log) runs.
All requests go to ONE customer, the worst case for the per-customer chain-head lock.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import calibration_load
from benchenv import fresh_stack, make_keys
from calibration_load import PORT, open_loop, wrk, wrk_script

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DB = "tc_audit_bench"  # --db
REDIS_DB = "4"  # --redis-db
CUSTOMER = "bench"
USERS = 1000


def sh(*args: str, env=None, check=True, input=None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=env, check=check, capture_output=True, text=True, input=input)


def psql(sql: str) -> str:
    done = sh(
        "psql",
        "-h",
        "127.0.0.1",
        "-U",
        "postgres",
        "-d",
        DB,
        "-v",
        "ON_ERROR_STOP=1",
        "-qAt",
        "-c",
        sql,
        check=False,
    )
    if done.returncode:
        sys.exit(f"psql failed: {done.stderr}")
    return done.stdout


# --- bulk seeding --------------------------------------------------------------------------

SUMS = [
    "n",
    "followed",
    "overtrust",
    "undertrust",
    "conf_n",
    "conf_sum",
    "gap_sum",
    "scored_n",
    "scored_followed",
    "p_sum",
    "q_sum",
    "a_conf_sum",
    "wo_sum",
    "wo_sq",
    "fwo_sum",
    "wu_sum",
    "wu_sq",
    "uwu_sum",
]  # the other columns of docs/architecture.md, Calibration aggregates, are 0 without outcomes

_WO = "greatest(0, 1 - 2 * ai_confidence)"
_WU = "greatest(0, 2 * ai_confidence - 1)"


def _sum_expr(name: str) -> str:
    """The aggregate column from decisions with a confidence and no outcome (what the seed produces)."""
    return {
        "n": "count(*)",
        "followed": "sum(followed_ai::int)",
        "overtrust": "sum((calibration_category = 'OVERTRUSTING')::int)",
        "undertrust": "sum((calibration_category = 'UNDERTRUSTING')::int)",
        "conf_n": "count(ai_confidence)",
        "conf_sum": "sum(ai_confidence)",
        "gap_sum": "sum(followed_ai::int - ai_confidence)",
        "scored_n": "count(ai_confidence)",
        "scored_followed": "sum(followed_ai::int)",
        "p_sum": "sum(ai_confidence)",
        "q_sum": "sum(CASE WHEN followed_ai THEN ai_confidence ELSE 1 - ai_confidence END)",
        "a_conf_sum": "sum(greatest(ai_confidence, 1 - ai_confidence))",
        "wo_sum": f"sum({_WO})",
        "wo_sq": f"sum({_WO} * {_WO})",
        "fwo_sum": f"sum(CASE WHEN followed_ai THEN {_WO} ELSE 0 END)",
        "wu_sum": f"sum({_WU})",
        "wu_sq": f"sum({_WU} * {_WU})",
        "uwu_sum": f"sum(CASE WHEN followed_ai THEN 0 ELSE {_WU} END)",
    }[name]


def seed(first: int, last: int) -> None:
    """Decisions seed-{first..last} for `bench`: 1,000 users, 5 models, over the last 89 days."""
    psql(f"""
        INSERT INTO audit_decision (customer_id, decision_id, user_id, model_id, model_version, ai_recommendation,
            ai_confidence, user_decision, initial_decision, outcome, context, subgroups, metadata, timestamp,
            logged_at, followed_ai, calibration_category, payload_fingerprint)
        SELECT '{CUSTOMER}', 'seed-' || g, 'user-' || (g % {USERS}), 'model-' || (g % 5), '1', ai, c, ud, NULL, NULL,
            'seeded', '{{}}', '{{}}', now() - ((g % 89) || ' days')::interval - ((g % 3600) || ' seconds')::interval,
            now(), ai = ud,
            CASE WHEN ai = ud AND c < 0.5 THEN 'OVERTRUSTING' WHEN ai <> ud AND c > 0.5 THEN 'UNDERTRUSTING'
                 ELSE 'CALIBRATED' END, ''
        FROM (SELECT g, CASE WHEN g % 3 = 0 THEN 'deny' ELSE 'approve' END AS ai,
                     CASE WHEN g % 4 = 0 THEN 'deny' ELSE 'approve' END AS ud,
                     ((g::bigint * 7919) % 1000) / 1000.0 AS c
              FROM generate_series({first}, {last}) g) s;
    """)
    head = psql(f"SELECT sequence FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'").strip()
    base = int(head or 0)
    psql(f"""
        INSERT INTO audit_chainhead (customer_id, sequence, head_hash, previous_head_hash, decisions, updated_at)
        VALUES ('{CUSTOMER}', 0, repeat('0', 64), repeat('0', 64), 0, now()) ON CONFLICT DO NOTHING;
        INSERT INTO audit_auditentry (id, customer_id, decision_id, sequence, type, decision_ref, timestamp, logged_at,
            user_id, model_id, model_version, ai_recommendation, ai_confidence, user_decision, followed_ai,
            calibration_category, outcome, context, subgroups, hash, previous_hash)
        SELECT 'aud_seed' || d.id, d.customer_id, d.id, {base} + row_number() OVER (ORDER BY d.id), 'decision',
            d.decision_id, d.timestamp, d.logged_at, d.user_id, d.model_id, d.model_version, d.ai_recommendation,
            d.ai_confidence, d.user_decision, d.followed_ai, d.calibration_category, NULL, d.context, d.subgroups,
            encode(sha256(('seed' || d.id)::bytea), 'hex'), repeat('0', 64)
        FROM audit_decision d
        WHERE d.customer_id = '{CUSTOMER}' AND d.decision_id LIKE 'seed-%'
          AND substring(d.decision_id from 6)::bigint BETWEEN {first} AND {last};
        UPDATE audit_chainhead h SET sequence = s.seq, decisions = h.decisions + {last - first + 1},
            head_hash = encode(sha256(('seed-head' || s.seq)::bytea), 'hex')
        FROM (SELECT max(sequence) AS seq FROM audit_auditentry WHERE customer_id = '{CUSTOMER}') s
        WHERE h.customer_id = '{CUSTOMER}';
    """)
    cols = ", ".join(SUMS)
    exprs = ", ".join(_sum_expr(name) for name in SUMS)
    updates = ", ".join(f"{n} = calibration_userdailyaggregate.{n} + excluded.{n}" for n in SUMS)
    for key in ("'*'", "model_id"):
        psql(f"""
            INSERT INTO calibration_userdailyaggregate (customer_id, user_id, model_key, day, {cols})
            SELECT customer_id, user_id, {key}, (timestamp AT TIME ZONE 'UTC')::date, {exprs}
            FROM audit_decision
            WHERE customer_id = '{CUSTOMER}' AND decision_id LIKE 'seed-%'
              AND substring(decision_id from 6)::bigint BETWEEN {first} AND {last}
            GROUP BY 1, 2, 3, 4
            ON CONFLICT (customer_id, user_id, model_key, day) DO UPDATE SET {updates};
        """)
    psql("ANALYZE")


INPROCESS = """
import json, time
from django.conf import settings
from rest_framework.test import APIClient
settings.RATE_LIMITS_ENABLED = False
client = APIClient()
client.credentials(HTTP_AUTHORIZATION="Bearer " + KEY)
out = {}
samples = []
for i in range(TRUST_N):  # the organisation's figures, risk users and confidence check over the whole history
    started = time.perf_counter()
    assert client.post("/v1/trust-score", {}, format="json").status_code == 200
    samples.append((time.perf_counter() - started) * 1000)
samples.sort()
out["/v1/trust-score (organisation)"] = {"rps": 1000 / (sum(samples) / TRUST_N), "p50": samples[TRUST_N // 2],
                                        "p99": samples[-1 - TRUST_N // 100], "errors": 0}
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
    out = sh(str(BIN / "python"), "manage.py", "shell", "-v0", "-c", code, env=env).stdout
    return json.loads(out.split("RESULT", 1)[1])


def row(name: str, r: dict) -> str:
    return f"{name:<58}{r['rps']:>9.0f}{r['p50']:>9.1f}{r['p99']:>9.1f}{r['errors']:>8}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--connections", type=int, default=16, help="wrk connections (closed loop)")
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--db", default=DB, help="the database to drop, create and load")
    parser.add_argument("--redis-db", default=REDIS_DB)
    parser.add_argument("--port", type=int, default=PORT)
    args = parser.parse_args()
    calibration_load.PORT = args.port
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install -y wrk")

    data_dir = Path(tempfile.mkdtemp(prefix="tc-audit-bench-"))
    env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=data_dir)
    globals()["DB"] = args.db  # psql() reads it
    keys = make_keys(env, customer=CUSTOMER, count=48)

    started = time.perf_counter()
    seed(1, args.small)
    print(f"seeded {args.small:,} decisions in {time.perf_counter() - started:.1f} s", flush=True)
    results: list[str] = []
    for path, r in inprocess(env, keys[0]).items():
        results.append(row(f"{path} in-process, one client ({args.small:,} stored)", r))
    print("\n".join(results), flush=True)

    web = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{args.port}",
            "--workers",
            str(args.workers),
            "--threads",
            str(args.threads),
            "--worker-class",
            "gthread",
            "--keep-alive",
            "30",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{args.port}/v1/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        script = wrk_script(data_dir / "log.lua", keys, "wrk")
        wrk("/v1/log", script, duration=3, connections=args.connections)  # warm up
        d = args.duration
        results.append(
            row(
                f"POST /v1/log, wrk closed loop -c{args.connections}",
                wrk("/v1/log", script, duration=d, connections=args.connections),
            )
        )
        results.append(
            row(
                f"POST /v1/calibrate, wrk closed loop -c{args.connections}",
                wrk("/v1/calibrate", script, duration=d, connections=args.connections),
            )
        )
        print("\n".join(results), flush=True)
        count = psql(f"SELECT decisions FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'").strip()
        results.append(
            row(
                f"POST /v1/log at {args.rate:.0f} req/s open loop ({int(count):,} stored)",
                open_loop("/v1/log", keys, rate=args.rate, duration=d),
            )
        )
        results.append(
            row(
                f"POST /v1/calibrate at {args.rate:.0f} req/s open loop",
                open_loop("/v1/calibrate", keys, rate=args.rate, duration=d),
            )
        )
        print("\n".join(results[-2:]), flush=True)

        stored = int(psql(f"SELECT decisions FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'").strip())
        started = time.perf_counter()
        step = 250_000
        first = args.small + 1
        target = args.small + max(0, args.big - stored)
        while first <= target:
            last = min(target, first + step - 1)
            seed(first, last)
            first = last + 1
        stored = int(psql(f"SELECT decisions FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'").strip())
        print(f"seeded up to {stored:,} decisions in {time.perf_counter() - started:.1f} s", flush=True)
        rows = psql(
            f"SELECT count(*) FROM calibration_userdailyaggregate WHERE customer_id = '{CUSTOMER}' AND user_id = 'user-7'"
            " AND model_key = '*'"
        ).strip()
        results.append(
            row(
                f"POST /v1/calibrate at {args.rate:.0f} req/s open loop ({stored:,} stored)",
                open_loop("/v1/calibrate", keys, rate=args.rate, duration=d),
            )
        )
        results.append(
            row(
                f"POST /v1/log at {args.rate:.0f} req/s open loop ({stored:,} stored)",
                open_loop("/v1/log", keys, rate=args.rate, duration=d),
            )
        )
        results.append(
            row(
                f"POST /v1/calibrate, wrk closed loop -c{args.connections} ({stored:,} stored)",
                wrk("/v1/calibrate", script, duration=d, connections=args.connections),
            )
        )
        results.append(f"(aggregate rows of one user, all models, at {stored:,} stored: {rows})")
        for path, r in inprocess(env, keys[0]).items():
            results.append(row(f"{path} in-process, one client ({stored:,} stored)", r))
    finally:
        web.terminate()
        web.wait()
    verify_tail = psql(f"SELECT count(*) FROM audit_auditentry WHERE customer_id = '{CUSTOMER}'").strip()
    print()
    print(
        f"gunicorn gthread {args.workers} workers x {args.threads} threads, PostgreSQL + Redis, one customer"
    )
    print(f"{'run':<58}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
    print("\n".join(results))
    print(f"audit entries stored: {int(verify_tail):,}")


if __name__ == "__main__":
    main()
