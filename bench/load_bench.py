"""Load benchmark of the foundation: GET /v1/health vs an authenticated, rate-limited GET.

Run:  .venv/bin/python bench/load_bench.py            (needs PostgreSQL and Redis on localhost, and wrk)
      .venv/bin/python bench/load_bench.py --duration 20 --connections 32

It creates a fresh database `trustcal_bench`, starts gunicorn (2 workers x 4 threads, gthread)
against PostgreSQL + Redis, drives it with wrk, and prints requests/s and p50/p99 latency.
The authenticated GET rotates over 40 enterprise keys so the token buckets never run dry
(every request still authenticates and takes a token). It also times authentication +
rate limiting alone, in-process, over 5,000 calls.
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchenv import fresh_stack, make_keys, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DB = "trustcal_bench"


def sh(*args: str, env=None, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=env, check=check, capture_output=True, text=True)


def wrk(url: str, *, duration: int, connections: int, script: str | None = None) -> dict:
    args = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency"]
    if script:
        args += ["-s", script]
    out = sh(*args, url).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def pct(label: str) -> float:
        value, unit = re.search(rf"\s{label}%\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": pct("50"), "p99": pct("99"), "non2xx": int(non2xx.group(1)) if non2xx else 0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install -y wrk")

    data_dir = tempfile.mkdtemp(prefix="trustcal-bench-")
    env = fresh_stack(db=DB, redis_db="14", data_dir=data_dir)
    keys = make_keys(env, customer="bench", count=40, admin=True)
    script = Path(data_dir) / "keys.lua"
    script.write_text(
        "local keys = {" + ",".join(f'"{k}"' for k in keys) + "}\nlocal i = 0\n"
        "request = function()\n  i = i + 1\n"
        "  return wrk.format('GET', nil, {['Authorization'] = 'Bearer ' .. keys[(i % #keys) + 1]})\nend\n"
    )
    web = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "config.wsgi:application",
            "--bind",
            "127.0.0.1:8791",
            "--workers",
            "2",
            "--threads",
            "4",
            "--worker-class",
            "gthread",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        wait_healthy("http://127.0.0.1:8791")
        base = "http://127.0.0.1:8791"
        authed = f"{base}/v1/admin/audit-log?limit=1"
        wrk(base + "/v1/health", duration=2, connections=args.connections)  # warm up
        wrk(authed, duration=2, connections=args.connections, script=str(script))
        health = wrk(base + "/v1/health", duration=args.duration, connections=args.connections)
        auth = wrk(authed, duration=args.duration, connections=args.connections, script=str(script))
    finally:
        web.terminate()
        web.wait()

    micro = sh(
        str(BIN / "python"),
        "manage.py",
        "shell",
        "-v0",
        "-c",
        "import time, statistics\n"
        "from rest_framework.test import APIRequestFactory\n"
        "from rest_framework.request import Request\n"
        "from keys.authentication import ApiKeyAuthentication\n"
        f"keys = {keys!r}\n"
        "auth = ApiKeyAuthentication(); factory = APIRequestFactory(); samples = []\n"
        "for i in range(5000):\n"
        "    request = Request(factory.get('/v1/x', HTTP_AUTHORIZATION='Bearer ' + keys[i % len(keys)]))\n"
        "    t = time.perf_counter(); auth.authenticate(request); samples.append((time.perf_counter() - t) * 1000)\n"
        "samples.sort(); print(statistics.median(samples), samples[int(len(samples) * 0.99)])\n",
        env=env,
    ).stdout.split()

    print(
        f"wrk -t2 -c{args.connections} -d{args.duration}s, gunicorn 2 workers x 4 threads, PostgreSQL + Redis"
    )
    print(f"{'endpoint':<44}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>10}")
    for name, r in (
        ("GET /v1/health (public)", health),
        ("GET /v1/admin/audit-log?limit=1 (auth+rate)", auth),
    ):
        print(f"{name:<44}{r['rps']:>10.0f}{r['p50']:>10.2f}{r['p99']:>10.2f}{r['non2xx']:>10}")
    print(f"authenticated throughput / health throughput: {auth['rps'] / health['rps']:.2f}")
    print(
        f"authentication + rate limit alone (in-process, 5,000 calls): p50 {float(micro[0]):.3f} ms, p99 {float(micro[1]):.3f} ms"
    )


if __name__ == "__main__":
    main()
