"""Garbage-collector pauses in a web process, before and after `gc.freeze()` (config/wsgi.py,
docs/deploy.md, Web processes).

Run:  .venv/bin/python bench/gc_pauses.py [--db tc_gc_bench] [--redis-db 9] [--requests 2000] [--pairs 10]

Against a fresh PostgreSQL database (dropped and created) and Redis db, in one Django process:
`--requests` calls of POST /v1/calibrate through the test client (no HTTP), timing every
collection by generation with `gc.callbacks`, first as the process is after loading the service,
then again after `gc.freeze()`, so both runs are in the same minutes. Prints, per run: the
requests' p50 / p99 / max (ms), and per generation the number of collections, their total and
their longest pause (ms), and the objects the collector tracks. `--pairs N`: N pairs of runs
instead, as loaded and frozen in turns (A B, B A, ...; `gc.unfreeze()` after each frozen run),
then the ratios as loaded / frozen of a full collection (`gc.collect()` timed after each run),
of the longest pause and of the request p99.
"""

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchenv import BIN, ROOT, fresh_stack, make_keys

CODE = r"""
import gc, statistics, time
from django.conf import settings
from django.urls import get_resolver
from rest_framework.test import APIClient
settings.RATE_LIMITS_ENABLED = False
get_resolver().url_patterns  # as config/wsgi.py: everything a request imports, loaded first
client = APIClient()
client.credentials(HTTP_AUTHORIZATION="Bearer " + KEY)
pauses = {0: [], 1: [], 2: []}
started = [0.0]
def timed(phase, info):
    if phase == "start":
        started[0] = time.perf_counter()
    else:
        pauses[info["generation"]].append((time.perf_counter() - started[0]) * 1000)
def run(n, label):
    for kept in pauses.values():
        kept.clear()
    lat = []
    for i in range(n):
        body = {"user_id": f"user-{i % 200}", "model_id": f"model-{i % 5}", "ai_recommendation": "approve",
                "user_decision": "approve" if i % 4 else "deny", "confidence": (i % 100) / 100, "context": "gc"}
        t = time.perf_counter()
        assert client.post("/v1/calibrate", body, format="json").status_code in (200, 201)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    gens = "; ".join(f"gen{g}: {len(p)} collections, {sum(p):.1f} ms, longest {max(p, default=0):.1f} ms"
                     for g, p in pauses.items())
    longest = max(max(p, default=0) for p in pauses.values())
    t = time.perf_counter()
    gc.collect()  # a full collection, whenever the requests ran into none
    full = (time.perf_counter() - t) * 1000
    print(f"{label}: p50 {lat[n // 2]:.1f} p99 {lat[int(n * 0.99)]:.1f} max {lat[-1]:.1f} ms | {gens} | "
          f"tracked objects {len(gc.get_objects()):,} | then a full collection {full:.1f} ms", flush=True)
    return {"longest": longest, "p99": lat[int(n * 0.99)], "full": full}
def ratios(name, values):
    values.sort()
    print(f"{name} as loaded / frozen: median {statistics.median(values):.2f}, min {values[0]:.2f}, "
          f"max {values[-1]:.2f}, {sum(v > 1 for v in values)} of {len(values)} above 1")
gc.callbacks.append(timed)
run(300, "warm-up")
if not PAIRS:
    run(N, "as loaded")
    gc.freeze()
    run(N, "frozen")
longest, p99, full = [], [], []
for at in range(PAIRS):  # alternating: as loaded then frozen, frozen then as loaded (gc.unfreeze), ...
    got = {}
    for frozen in (False, True) if at % 2 == 0 else (True, False):
        if frozen:
            gc.freeze()
        got[frozen] = run(N, f"pair {at + 1} {'frozen' if frozen else 'as loaded'}")
        if frozen:
            gc.unfreeze()
    longest.append(got[False]["longest"] / max(got[True]["longest"], 0.01))
    p99.append(got[False]["p99"] / got[True]["p99"])
    full.append(got[False]["full"] / got[True]["full"])
if PAIRS:
    ratios("a full collection", full)
    ratios("longest pause", longest)
    ratios("request p99", p99)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="tc_gc_bench")
    parser.add_argument("--redis-db", default="9")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument(
        "--pairs",
        type=int,
        default=0,
        help="alternating pairs of runs as loaded and frozen (gc.unfreeze between)",
    )
    args = parser.parse_args()
    env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=f"/tmp/{args.db}-data")
    key = make_keys(env, customer="bench", count=1)[0]
    print("load average at the start:", " ".join(Path("/proc/loadavg").read_text().split()[:3]), flush=True)
    code = f"KEY = {key!r}\nN = {args.requests}\nPAIRS = {args.pairs}\n" + CODE
    subprocess.run(
        [str(BIN / "python"), "manage.py", "shell", "-v0", "-c", code], cwd=ROOT, env=env, check=True
    )
    print("load average at the end:", " ".join(Path("/proc/loadavg").read_text().split()[:3]))


if __name__ == "__main__":
    main()
