"""Alternating pairs of two service setups under gunicorn on concurrent POST /log: for a
mechanism whose gain needs concurrent requests (group commit, a group's appends), which the
in-process bench/pairs.py, one thread, cannot show (docs/architecture.md, "Performance code
earns its place").

Run:  .venv/bin/python bench/serve_pairs.py --db tc_serve_pairs --redis-db 12 --port 8861 \\
          --b-env TRUSTCAL_DECISION_GROUP_COMMIT=false --pairs 10 --duration 15
      .venv/bin/python bench/serve_pairs.py --b DIR_WITHOUT ...   (another checkout as B)

One fresh database and Redis db, one customer. Each run starts gunicorn (gthread 2 x 8, as
bench/ingest_bench.py) from its side's checkout with its side's environment, warms it for 2 s,
drives POST /log closed loop from ingest_bench.py's asyncio client (--connections, 16) for
--duration seconds with the CPU of the web processes and their database backends, and stops
it; the order is swapped every pair (A B, B A, ...). Prints each pair's B/A of requests per
second, of CPU per request (web + backends) and of the web processes' alone, then their median,
spread and how many are above 1, beside limit_insert --threads 4 run before and after the pairs
(the same-run limit). `--a-shape 2x8 --b-shape 4x4`: the sides differ in gunicorn's workers and
threads instead (one checkout).
"""

import argparse
import asyncio
import functools
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import ingest_bench
from benchenv import BIN, ROOT, fresh_stack, make_keys, wait_healthy


def side_run(args: argparse.Namespace, env: dict, keys: list[str], root: str, tag: str, shape: str) -> dict:
    workers, threads = shape.split("x")
    web = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{args.port}",
         "--workers", workers, "--threads", threads, "--worker-class", "gthread",
         "--keep-alive", "30", "--log-level", "warning"],
        cwd=root, env=env,
    )  # fmt: skip
    try:
        wait_healthy(f"http://127.0.0.1:{args.port}")
        asyncio.run(ingest_bench._closed_loop("/v1/log", keys, connections=4, duration=2, tag=f"{tag}w"))
        measure = functools.partial(
            ingest_bench._asyncio_log, keys, connections=args.connections, duration=args.duration, tag=tag
        )
        r = ingest_bench._with_cpu(web, measure, args.duration)
    finally:
        web.terminate()
        web.wait()
    return {**r, "cpu_ms": r["web_cpu_ms"] + r["backend_cpu_ms"]}


def summary(name: str, ratios: list[float]) -> str:
    return (
        f"{name} B/A: median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f},"
        f" {sum(r > 1 for r in ratios)} of {len(ratios)} above 1"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", default=str(ROOT), help="the checkout with the mechanism")
    parser.add_argument("--b", default=str(ROOT), help="the checkout without it")
    parser.add_argument("--a-env", action="append", default=[], help="NAME=VALUE for A's service")
    parser.add_argument("--b-env", action="append", default=[], help="NAME=VALUE for B's service")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--duration", type=float, default=15)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--a-shape", help="WORKERSxTHREADS of A's gunicorn (default: --workers x --threads)")
    parser.add_argument("--b-shape", help="the same for B")
    parser.add_argument("--db", default="tc_serve_pairs")
    parser.add_argument("--redis-db", default="12")
    parser.add_argument("--port", type=int, default=8861)
    parser.add_argument("--perf-python", default="/tmp/perf-venv/bin/python")
    args = parser.parse_args()
    ingest_bench.DB, ingest_bench.PORT = args.db, args.port
    ingest_bench.DSN = f"postgresql://postgres@127.0.0.1:5432/{args.db}"
    env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=Path(tempfile.mkdtemp(prefix="tc-pairs-")))
    env["TRUSTCAL_THREAD_SHARE"] = "0"  # one customer: it may use every thread
    keys = make_keys(env, customer=ingest_bench.CUSTOMER, count=48)
    sides = {
        side: (
            getattr(args, side),
            env | dict(kv.split("=", 1) for kv in getattr(args, f"{side}_env")),
            getattr(args, f"{side}_shape") or f"{args.workers}x{args.threads}",
        )
        for side in ("a", "b")
    }
    limits = [ingest_bench.limit_insert(4, args.duration, args.perf_python)["tx_per_s"]]
    print(f"limit_insert --threads 4: {limits[0]} tx/s; load {os.getloadavg()[0]:.1f}", flush=True)
    rps, cpu, web = [], [], []
    for at in range(args.pairs):
        order = ("a", "b") if at % 2 == 0 else ("b", "a")
        got = {
            side: side_run(args, sides[side][1], keys, sides[side][0], f"p{at}{side}", sides[side][2])
            for side in order
        }
        rps.append(got["b"]["rps"] / got["a"]["rps"])
        cpu.append(got["b"]["cpu_ms"] / got["a"]["cpu_ms"])
        web.append(got["b"]["web_cpu_ms"] / got["a"]["web_cpu_ms"])
        print(
            f"pair {at + 1} ({'-'.join(order)}): req/s A {got['a']['rps']:.1f} B {got['b']['rps']:.1f}"
            f" ({rps[-1]:.3f}); CPU ms A {got['a']['cpu_ms']:.2f} B {got['b']['cpu_ms']:.2f} ({cpu[-1]:.3f});"
            f" web {got['a']['web_cpu_ms']:.2f} {got['b']['web_cpu_ms']:.2f} ({web[-1]:.3f});"
            f" p99 ms A {got['a']['p99']:.0f} B {got['b']['p99']:.0f}; errors"
            f" {got['a']['errors']}/{got['b']['errors']}; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    limits.append(ingest_bench.limit_insert(4, args.duration, args.perf_python)["tx_per_s"])
    print(f"limit_insert --threads 4 before and after: {limits[0]} and {limits[1]} tx/s")
    print(summary("requests/s", rps))
    print(summary("CPU per request (web + backends)", cpu))
    print(summary("web CPU per request", web))


if __name__ == "__main__":
    main()
