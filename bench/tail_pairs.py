"""Alternating pairs of two web-process environments on the paced POST /calibrate tail, with the
PostgreSQL connections each run's request threads opened (docs/architecture.md, "Performance code
earns its place").

Run:  .venv/bin/python bench/tail_pairs.py --db tc_tail_pairs --redis-db 12 --port 8862 \\
          --a-env DATABASE_CONN_MAX_AGE=60 --b-env DATABASE_CONN_MAX_AGE=3600 --pairs 10 --rate 60 --duration 68

One fresh database and Redis db, one customer. Each run starts gunicorn (gthread 2 x 8, as
bench/ingest_bench.py, with bench/tail_gunicorn.py's per-request lines) with its side's
environment, warms it with POST /log closed loop on 16 connections for 3 s (every request thread
connects), then sends POST /calibrate paced open loop at --rate for --duration seconds from
ingest_bench.py's asyncio client (64 connections, each opened by its first request), and stops it;
the order is swapped every pair (A B, B A, ...). Each run prints p50, p99 and max from the
scheduled start, the p99 and max of the requests scheduled 59-66 s after the warm-up began (when
connections opened then reach a 60 s maximum age), and `reopened`: how many times a thread's
requests moved to another database backend (its connection closed and opened again). Then each
figure's B/A per pair: median, spread and how many pairs are above 1.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import ingest_bench
from benchenv import BIN, ROOT, fresh_stack, make_keys, wait_healthy


def _reopened(log_dir: Path) -> int:
    """Times a request thread's backend changed (bench/tail_gunicorn.py: R index start end thread backend)."""
    backends: dict[tuple[str, str], set[str]] = {}
    for path in log_dir.glob("times-*.log"):
        for line in path.read_text().splitlines():
            fields = line.split()
            if fields[0] == "R" and fields[5] != "0":  # 0: closed at that request's end
                backends.setdefault((path.name, fields[4]), set()).add(fields[5])
    return sum(len(seen) - 1 for seen in backends.values())


def _pct(values: list[float], q: float) -> float:
    return values[max(0, int(len(values) * q) - 1)] if values else float("nan")


def side_run(args: argparse.Namespace, env: dict, keys: list[str], log_dir: Path, tag: str) -> dict:
    for old in log_dir.glob("*"):
        old.unlink()
    web = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{args.port}",
         "--workers", "2", "--threads", "8", "--worker-class", "gthread", "--keep-alive", "30",
         "--log-level", "warning", "-c", str(ROOT / "bench" / "tail_gunicorn.py")],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        wait_healthy(f"http://127.0.0.1:{args.port}")
        time.sleep(1)
        load = os.getloadavg()[0]
        warmed = time.perf_counter()
        asyncio.run(ingest_bench._closed_loop("/v1/log", keys, connections=16, duration=3, tag=f"w{tag}"))
        times: list[tuple[float, float]] = []
        asyncio.run(
            ingest_bench._open_loop(
                "/v1/calibrate", keys, rate=args.rate, duration=args.duration, tag=tag, trace=times
            )
        )
        time.sleep(0.5)  # the processes' last lines
    finally:
        web.terminate()
        web.wait()
    total = sorted((read - scheduled) * 1000 for scheduled, read in times)
    aged = sorted((read - s) * 1000 for s, read in times if warmed + 59 <= s <= warmed + 66)
    return {
        "p50": _pct(total, 0.5),
        "p99": _pct(total, 0.99),
        "max": total[-1],
        "aged_p99": _pct(aged, 0.99),
        "aged_max": aged[-1] if aged else float("nan"),
        "reopened": _reopened(log_dir),
        "load": (round(load, 2), round(os.getloadavg()[0], 2)),
        "at": time.strftime("%H:%M:%S", time.gmtime()),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="tc_tail_pairs")
    parser.add_argument("--redis-db", default="12")
    parser.add_argument("--port", type=int, default=8862)
    parser.add_argument("--a-env", action="append", default=[], help="NAME=VALUE for side A's web processes")
    parser.add_argument("--b-env", action="append", default=[], help="NAME=VALUE for side B's web processes")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--rate", type=float, default=60)
    parser.add_argument("--duration", type=float, default=68)
    args = parser.parse_args()
    ingest_bench.PORT = args.port
    data_dir = Path(tempfile.mkdtemp(prefix="tc-tail-pairs-"))
    env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=data_dir)
    env["TRUSTCAL_THREAD_SHARE"] = "0"  # one customer: it may use every thread
    keys = make_keys(env, customer=ingest_bench.CUSTOMER, count=48)
    log_dir = data_dir / "times"
    log_dir.mkdir()
    env["TAIL_PROBE_DIR"] = str(log_dir)
    sides = {
        side: {**env, **dict(item.split("=", 1) for item in given)}
        for side, given in (("A", args.a_env), ("B", args.b_env))
    }
    runs: list[dict[str, dict]] = []
    for n in range(args.pairs):
        pair: dict[str, dict] = {}
        for side in ("A", "B") if n % 2 == 0 else ("B", "A"):
            pair[side] = side_run(args, sides[side], keys, log_dir, f"p{n}{side}")
            print(f"pair {n} {side} {json.dumps(pair[side])}", flush=True)
        runs.append(pair)
    for figure in ("p50", "p99", "max", "aged_p99", "aged_max", "reopened"):
        ratios = [p["B"][figure] / p["A"][figure] for p in runs if p["A"][figure]]
        if ratios:
            print(
                f"{figure} B/A: median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), "
                f"{sum(r > 1 for r in ratios)}/{len(ratios)} above 1"
            )


if __name__ == "__main__":
    main()
