"""Alternating pairs of two checkouts on one in-process benchmark (bench/log_cpu.py), the test a
mechanism whose reason is speed must pass to stay (docs/architecture.md, "Performance code
earns its place"): --pairs runs of each, the order swapped every pair (A B, B A, ...), each
pair's ratio B/A of CPU and of wall time per request, then their median and spread.

Run:  DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python bench/pairs.py \\
          --a DIR_WITH --b DIR_WITHOUT --pairs 10 -- --requests 5 --batch 1000
(DIR: a checkout, e.g. `git archive <commit> | tar -x -C DIR`; the arguments after `--` go to
log_cpu.py; the database must be migrated; `--a-database-url`/`--b-database-url` give a side its
own database when a migration between them changes the schema.) A ratio above 1 means B (without the mechanism)
spends more per request. On PostgreSQL the ratio of the backend's CPU is printed too (what a
set-wise statement saves is the server's), and the sum of both CPUs (the two cores' work). For a
change that sends the same statements, the ratio of this process's CPU per backend CPU is printed
too: the server's work is then the same in A and B, and other processes' load inflates both CPU
times alike (at load 4-8 the same statements' backend CPU swung 0.81-1.24 from run to run; the ratio
per backend CPU spread about half as far)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(root: str, extra: list[str], database_url: str | None) -> dict:
    env = os.environ | ({"DATABASE_URL": database_url} if database_url else {})
    out = subprocess.run(
        [sys.executable, str(HERE / "log_cpu.py"), "--root", root, *extra],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", required=True, help="the checkout with the mechanism")
    parser.add_argument("--b", required=True, help="the checkout without it")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--a-database-url", help="A's own database (a schema B's code cannot use)")
    parser.add_argument("--b-database-url", help="B's own database")
    args, extra = parser.parse_known_args()
    extra = [arg for arg in extra if arg != "--"]
    cpu, wall, backend, both, per_backend = [], [], [], [], []
    for at in range(args.pairs):
        order = ("a", "b") if at % 2 == 0 else ("b", "a")
        got = {side: run(getattr(args, side), extra, getattr(args, f"{side}_database_url")) for side in order}
        cpu.append(got["b"]["cpu_ms_per_request"] / got["a"]["cpu_ms_per_request"])
        wall.append(got["b"]["wall_ms_per_request"] / got["a"]["wall_ms_per_request"])
        server = {side: got[side]["backend_cpu_ms_per_request"] for side in ("a", "b")}
        if server["a"] == server["a"]:  # not NaN: PostgreSQL
            backend.append(server["b"] / server["a"])
            total = {side: got[side]["cpu_ms_per_request"] + server[side] for side in ("a", "b")}
            both.append(total["b"] / total["a"])
            per_backend.append(cpu[-1] / backend[-1])
        print(
            f"pair {at + 1} ({'-'.join(order)}): cpu ms A {got['a']['cpu_ms_per_request']:.2f} "
            f"B {got['b']['cpu_ms_per_request']:.2f} ({cpu[-1]:.3f}); wall ms A "
            f"{got['a']['wall_ms_per_request']:.2f} B {got['b']['wall_ms_per_request']:.2f} ({wall[-1]:.3f})"
            + (
                f"; backend ms A {server['a']:.2f} B {server['b']:.2f} ({backend[-1]:.3f})" if backend else ""
            ),
            flush=True,
        )
    for name, ratios in (
        ("cpu", cpu),
        ("wall", wall),
        ("backend cpu", backend),
        ("cpu + backend", both),
        ("cpu per backend cpu (the same statements only)", per_backend),
    ):
        if not ratios:
            continue
        print(
            f"{name} B/A: median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, "
            f"max {max(ratios):.3f}, {sum(r > 1 for r in ratios)} of {len(ratios)} above 1"
        )


if __name__ == "__main__":
    main()
