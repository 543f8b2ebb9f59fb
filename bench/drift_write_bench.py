"""What drift monitors add to a write (docs/reference/drift.md, Processing in the write):
`POST /log` and 1,000-item `POST /log/batch` of customers with 0, 10 and 50 enabled monitors that
match every decision, and of a customer with none written as before drift monitors (drift's
contributor left out of the pipeline: "before"), in-process through Django's test client on one
thread, as bench/log_cpu.py. The variants take turns request by request (a round of POST /log is
one request of each, in an order that rotates; a round of batches likewise), so the machine's
load falls on all of them alike. Each variant's median wall and CPU time per request, and its
ratio to the "before" customer's, alternating pairs.

With PostgreSQL the plain limits run in the same process's minutes, before and after:
limit_insert --threads 1 (one chained insert per transaction: its median) and limit_batch
(1,000 decisions per transaction: its median), from BENCH_PERF_DIR (/work/shared/perf or
bench/baselines); each service median is also printed as a ratio to its limit.

Run:  DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> REDIS_URL=redis://127.0.0.1:<port>/<n> \\
      .venv/bin/python bench/drift_write_bench.py [--rounds 400] [--batch-rounds 10]
(a fresh database: the script migrates it and makes its customers. Without DATABASE_URL it
measures the embedded default, SQLite in TRUSTCAL_DATA_DIR, and runs no limit.)

The monitors: organization scope, no model, over_reliance and under_reliance (a `next`
baseline of 50, then charted) and ai_calibration_up and _down (charted at once), in turn, with
h = 1,000 given (no alarm: an alarm is a rare event). Every decision has an AI confidence and
an outcome, so it is a point of every monitor. Prints one JSON line last."""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchenv import api_client, checkout_root, in_process_service
from ingest_bench import decision

ROOT = checkout_root()
PERF = Path(os.environ.get("BENCH_PERF_DIR", ROOT / "bench" / "baselines"))
CHARTS = ("over_reliance", "ai_calibration_up", "under_reliance", "ai_calibration_down")
VARIANTS = ("before", "0", "10", "50")


def limit(script: str, seconds: float) -> dict:
    out = subprocess.run(
        [sys.executable, str(PERF / script), "--dsn", os.environ["DATABASE_URL"], "--seconds", str(seconds),
         *(["--threads", "1"] if script == "limit_insert.py" else [])],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def monitor_body(i: int) -> dict:
    chart = CHARTS[i % len(CHARTS)]
    body = {"chart": chart, "scope": "organization", "h": 1000, "name": f"bench {i}"}
    if chart.endswith("reliance"):
        body["baseline"] = {"mode": "next", "decisions": 50}
    return body


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400, help="POST /log rounds (one request per variant)")
    parser.add_argument("--batch-rounds", type=int, default=10, help="batch rounds (one batch per variant)")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--limit-seconds", type=float, default=10)
    parser.add_argument("--root", help="the checkout to measure (default: this one)")
    args = parser.parse_args()

    in_process_service()
    from django.db import connection

    from audit import registry

    postgres = connection.vendor == "postgresql"
    load = [os.getloadavg()[0]]
    limits: dict[str, list[dict]] = {"insert": [], "batch": []}
    if postgres:
        limits["insert"].append(limit("limit_insert.py", args.limit_seconds))
        limits["batch"].append(limit("limit_batch.py", args.limit_seconds))

    tag = f"{time.time_ns()}"
    clients = {}
    for variant in VARIANTS:
        client = clients[variant] = api_client(f"drift-{variant}-{tag}")
        for i in range(int(variant) if variant.isdigit() else 0):
            answer = client.post("/v1/drift-monitors", monitor_body(i), format="json")
            assert answer.status_code == 201, answer.content
    everything = registry.contributors()
    without_drift = tuple(c for c in everything if c.name != "drift")

    rnd = random.Random(1)
    counter = iter(range(10**9))

    def body() -> dict:  # ingest_bench's decision, with an outcome (a calibration chart's point)
        item = decision(next(counter), f"drift{tag}", rnd)
        return item | {"outcome": item["ai_recommendation"] if rnd.random() < 0.7 else "other"}

    def send(variant: str, path: str, payload: dict, expected: int) -> tuple[float, float]:
        registry.contributors = (lambda: without_drift) if variant == "before" else (lambda: everything)  # type: ignore[assignment]
        cpu, wall = time.process_time(), time.perf_counter()
        answer = clients[variant].post(path, payload, format="json")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert answer.status_code == expected, answer.content
        return wall * 1000, cpu * 1000

    def rounds(count: int, path: str, make, expected: int) -> dict[str, dict[str, list[float]]]:
        got: dict[str, dict[str, list[float]]] = {v: {"wall": [], "cpu": []} for v in VARIANTS}
        for r in range(count):
            shift = r % len(VARIANTS)
            for variant in VARIANTS[shift:] + VARIANTS[:shift]:
                payload = make()  # built outside the timing
                wall, cpu = send(variant, path, payload, expected)
                got[variant]["wall"].append(wall)
                got[variant]["cpu"].append(cpu)
        return got

    # Warm-up: the monitors' baselines complete (50 points) and every path is prepared.
    rounds(2, "/v1/log/batch", lambda: {"decisions": [body() for _ in range(args.batch)]}, 200)
    rounds(20, "/v1/log", body, 201)
    logs = rounds(args.rounds, "/v1/log", body, 201)
    batches = rounds(
        args.batch_rounds, "/v1/log/batch", lambda: {"decisions": [body() for _ in range(args.batch)]}, 200
    )
    registry.contributors = lambda: everything  # type: ignore[assignment]
    for variant in VARIANTS[2:]:
        state = clients[variant].get("/v1/drift-monitors", {"limit": 100}).json()["data"]
        assert all(m["status"] == "live" for m in state), [m["status"] for m in state]
    load.append(os.getloadavg()[0])
    if postgres:
        limits["insert"].append(limit("limit_insert.py", args.limit_seconds))
        limits["batch"].append(limit("limit_batch.py", args.limit_seconds))
    load.append(os.getloadavg()[0])

    out: dict = {"backend": connection.vendor, "rounds": args.rounds, "batch_rounds": args.batch_rounds,
                 "load_average": load}  # fmt: skip
    limit_ms = {
        "log": statistics.mean(r["p50_ms"] for r in limits["insert"]) if postgres else None,
        "batch": statistics.mean(r["p50_ms"] for r in limits["batch"]) if postgres else None,
    }
    out["limits"] = {
        "limit_insert_threads_1_p50_ms": [r["p50_ms"] for r in limits["insert"]],
        "limit_batch_p50_ms": [r["p50_ms"] for r in limits["batch"]],
    }
    for name, got in (("log", logs), ("batch", batches)):
        rows = {}
        base = {k: statistics.median(got["before"][k]) for k in ("wall", "cpu")}
        for variant in VARIANTS:
            wall, cpu = statistics.median(got[variant]["wall"]), statistics.median(got[variant]["cpu"])
            # Alternating pairs: each round's variant against that round's "before".
            pairs = [v / b for v, b in zip(got[variant]["wall"], got["before"]["wall"], strict=True)]
            rows[variant] = {
                "wall_ms_median": round(wall, 3),
                "cpu_ms_median": round(cpu, 3),
                "wall_over_before": round(wall / base["wall"], 3),
                "cpu_over_before": round(cpu / base["cpu"], 3),
                "wall_minus_before_ms": round(wall - base["wall"], 3),
                "pairs_over_before_median": round(statistics.median(pairs), 3),
                "pairs_above_1": f"{sum(p > 1 for p in pairs)} of {len(pairs)}",
                "over_limit": round(wall / limit_ms[name], 2) if limit_ms[name] else None,
            }
            print(f"{name:5} {variant:>6}: " + ", ".join(f"{k} {v}" for k, v in rows[variant].items()),
                  file=sys.stderr)  # fmt: skip
        out[name] = rows
    print(json.dumps(out))


if __name__ == "__main__":
    main()
