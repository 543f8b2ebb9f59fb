"""CPU time of one POST /log in-process (PostgreSQL + Redis): N requests through Django's test
client on one thread, one customer, CPU seconds of this process per request (time.process_time,
so waiting on PostgreSQL does not count), the CPU time of its PostgreSQL backend per request
(/proc/<pid>/schedstat: PostgreSQL on this host) and the wall time; `--profile` prints cProfile's top
functions by cumulative CPU time (BENCH_SORT=tottime for their own time;
BENCH_PROFILE_OUT=FILE also saves the profile for pstats); `--statements` prints the backend's CPU time
per statement text over the measured requests (each statement sent outside pipeline mode, so a
batch's, read from the backend's schedstat before and after it; COMMIT among them: the deferred
foreign-key checks and the WAL write run then).
bench/ingest_bench.py runs it as its last step.

Run:  DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> REDIS_URL=redis://127.0.0.1:6379/<n> \\
      .venv/bin/python bench/log_cpu.py --requests 1000 [--profile] [--batch 1000]
(`--batch N`: each request is a POST /log/batch of N decisions; the figures are per batch.
`--calibrate`: each request is a POST /calibrate of the same decisions. `--stub-write`: each
POST /log's write answers the last stored decision, so that only the request around it counts.
`--monitors N`: a fresh customer with N drift monitors matching every decision, which then
carries an outcome, as bench/drift_write_bench.py. `--rate-limits`: the tier rate limit on, as in production; with Redis a web process then keeps
the keys it verified, keys/keycache.py. `--freeze`: the process loads what config/wsgi.py loads and
freezes it, as a web process does, so the collector's full collections cost what they cost there.)
(the database must be migrated and is ANALYZEd after the warm-up; the script makes its own customer
and key. Without DATABASE_URL it measures the embedded default, SQLite in TRUSTCAL_DATA_DIR, with no
backend figure.)"""

import argparse
import cProfile
import json
import os
import pstats
import random
import sys
import time
from pathlib import Path

from benchenv import checkout_root

# `--root DIR` measures another checkout of the service (an earlier commit) with this venv.
ROOT = checkout_root()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--customer", default="cpu-bench")
    parser.add_argument("--root", help="the checkout to measure (default: this one)")
    parser.add_argument("--batch", type=int, default=0, help="POST /log/batch of this many items instead")
    parser.add_argument("--calibrate", action="store_true", help="POST /calibrate instead (200)")
    parser.add_argument("--statements", action="store_true", help="backend CPU per statement text")
    parser.add_argument("--monitors", type=int, default=0, help="drift monitors matching every decision")
    parser.add_argument(
        "--rate-limits", action="store_true", help="the tier rate limit on, as in production (off by default)"
    )
    parser.add_argument(
        "--stub-write", action="store_true", help="POST /log with the write answered by a stored result"
    )
    parser.add_argument(
        "--freeze",
        action="store_true",
        help="load and freeze as a web process does (config/wsgi.py: gc.freeze()) before the requests",
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    from keys.services import api_key_create

    if args.freeze:
        import config.wsgi  # noqa: F401  (what a web process loads, then gc.freeze())
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    settings.RATE_LIMITS_ENABLED = args.rate_limits
    tag = f"{time.time_ns()}"
    customer = f"{args.customer}-{tag}" if args.monitors else args.customer
    key = api_key_create(customer_id=customer, tier="enterprise").value
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    rnd = random.Random(1)
    if args.monitors:
        from drift_write_bench import monitor_body

        for i in range(args.monitors):  # their `next` baselines of 50 complete in the warm-up
            assert client.post("/v1/drift-monitors", monitor_body(i), format="json").status_code == 201

    def body(i: int) -> dict:
        ai = rnd.choice(("approve", "deny"))
        return {
            "decision_id": f"cpu-{tag}-{i}",
            "user_id": f"user-{i % 200}",
            "model_id": f"model-{i % 5}",
            "model_version": "1",
            "ai_recommendation": ai,
            "ai_confidence": round(rnd.random(), 3),
            "user_decision": ai if rnd.random() < 0.75 else "other",
            "context": "cpu bench",
            "subgroups": {"gender": rnd.choice("fm"), "age_group": rnd.choice(["18-30", "31-50", "51+"])},
        } | ({"outcome": ai if rnd.random() < 0.7 else "other"} if args.monitors else {})

    for i in range(50):  # warm-up: connections, prepared statements, imports
        assert client.post("/v1/log", body(-i - 1), format="json").status_code == 201
    if args.stub_write:
        _write_stubbed()
    if args.batch:
        path, expected = "/v1/log/batch", 200
        bodies: list = [
            {"decisions": [body(i * args.batch + j) for j in range(args.batch)]} for i in range(args.requests)
        ]
    elif args.calibrate:
        path, expected = "/v1/calibrate", 200
        bodies = [body(i) for i in range(args.requests)]
    else:
        path, expected = "/v1/log", 201
        bodies = [body(i) for i in range(args.requests)]
    from django.db import connection

    backend = Path("/nonexistent")  # SQLite (the embedded default): no backend process
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # this thread's PostgreSQL backend, on this host
            # The statistics a deployment's autovacuum keeps (it is off on the bench machines), as
            # ingest_bench.py takes them: on a table never analysed a batch's stored read hashes
            # every decision of the customer (42 ms of the server's CPU at 30,000 stored, 2 once
            # analysed), which hid the rest of the batch's profile.
            cursor.execute("ANALYZE")
            cursor.execute("SELECT pg_backend_pid()")
            backend = Path(f"/proc/{cursor.fetchone()[0]}/schedstat")

    def backend_ms() -> float:  # the backend's CPU time (ns in schedstat's first field)
        return int(backend.read_text().split()[0]) / 1e6 if backend.exists() else float("nan")

    # The profile counts CPU time (waiting on PostgreSQL is not CPU), like the figure printed.
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    per_statement = _statements_timed(backend_ms) if args.statements else None
    backend0 = backend_ms()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if profiler:
        profiler.enable()
    for b in bodies:
        response = client.post(path, b, format="json")
        assert response.status_code == expected, response.content
    if profiler:
        profiler.disable()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    backend_cpu = backend_ms() - backend0
    if per_statement is not None:
        per_statement.clear_patch()
        for text, (calls, ms) in sorted(per_statement.items(), key=lambda kv: -kv[1][1])[:20]:
            print(
                f"{calls:5d} {ms / args.requests:8.1f} ms backend CPU per request  {text[:110]}",
                file=sys.stderr,
            )
    if profiler:
        if os.environ.get("BENCH_PROFILE_OUT"):
            profiler.dump_stats(os.environ["BENCH_PROFILE_OUT"])
        pstats.Stats(profiler, stream=sys.stderr).sort_stats(
            os.environ.get("BENCH_SORT", "cumulative")
        ).print_stats(45)
    print(
        json.dumps(
            {
                "requests": args.requests,
                "batch": args.batch or None,
                "path": path,
                "cpu_ms_per_request": round(cpu / args.requests * 1000, 3),
                "wall_ms_per_request": round(wall / args.requests * 1000, 3),
                "backend_cpu_ms_per_request": round(backend_cpu / args.requests, 3),
                "profiled": bool(profiler),
            }
        )
    )


def _write_stubbed() -> None:
    """Every later POST /log answers the decision that a real write stores now, as if just
    written: what is measured is the request around the write (middleware, DRF,
    authentication, validation, the response), which the write's CPU otherwise hides."""
    from audit import services

    write = services.decision_log
    stored: list = []

    def stub(**kwargs):
        if not stored:
            stored.append(write(**kwargs))
        return stored[0]

    services.decision_log = stub  # type: ignore[assignment]


class _Timed(dict):
    """Backend CPU (ms) and calls per statement text, from psycopg's Cursor.execute and .copy
    wrapped while it is alive (clear_patch puts them back)."""

    def clear_patch(self) -> None:
        import psycopg

        psycopg.Cursor.execute, psycopg.Cursor.copy, psycopg.Connection.commit = self.originals  # type: ignore[method-assign]

    def add(self, text: str, ms: float) -> None:
        calls, total = self.get(text, (0, 0.0))
        self[text] = (calls + 1, total + ms)


def _statements_timed(backend_ms) -> _Timed:
    import contextlib

    import psycopg

    timed = _Timed()
    execute, copy, commit = psycopg.Cursor.execute, psycopg.Cursor.copy, psycopg.Connection.commit
    timed.originals = (execute, copy, commit)

    def key(query) -> str:
        return " ".join(str(query).split())

    def timed_execute(self, query, params=None, **kwargs):
        if self.connection.pgconn.pipeline_status:  # its time is spent at the pipeline's sync
            return execute(self, query, params, **kwargs)
        start = backend_ms()
        try:
            return execute(self, query, params, **kwargs)
        finally:
            timed.add(key(query), backend_ms() - start)

    @contextlib.contextmanager
    def timed_copy(self, statement, *args, **kwargs):
        start = backend_ms()
        with copy(self, statement, *args, **kwargs) as stream:
            yield stream
        timed.add(key(statement), backend_ms() - start)

    def timed_commit(self):
        start = backend_ms()
        try:
            return commit(self)
        finally:
            timed.add("COMMIT", backend_ms() - start)

    psycopg.Cursor.execute, psycopg.Cursor.copy = timed_execute, timed_copy
    psycopg.Connection.commit = timed_commit
    return timed


if __name__ == "__main__":
    main()
