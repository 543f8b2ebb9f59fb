# ruff: noqa: S608 -- the SQL here is built from constants of this script, never from input
"""Where the /calibrate tail comes from: the client's and the server's times of the same requests.

Run:  .venv/bin/python bench/tail_probe.py --db tc_tail --redis-db 3 --port 8750 --seed 100000 \
          --rate 150 --duration 30 --phases 3

Starts gunicorn (gthread 4 x 2, as calibration_bench.py) with bench/tail_gunicorn.py, which keeps
the repository's gunicorn.conf.py and adds, per web process, the wall-clock start and end of every
request (gunicorn's pre_request / post_request) and every garbage collection (gc.callbacks), written
to a file per process. The open-loop client (calibration_load.open_loop, unchanged) sends each
request with its index in a header and records, per request, when it was scheduled, when it was
written to the socket and when its answer was read. For every request slower than --slow ms the
script says where the time went:

  send lag     written - scheduled     (the client late to send: its own loop, CPU or collector)
  server wait  server start - written  (accepted, not yet handled: gthread's poller, its threads, the GIL)
  server       server end - start      (Django, the database, Redis, the group commit)
  read lag     read - server end       (the client late to read the answer)

`first`: the first --first (4) requests of each web process, their times' median and max (what
a worker's start costs them). `connections_opened`: when, in s from the phase's start, a request
thread served on a new database backend (`new`: its first connection; `again`: opened again after
DATABASE_CONN_MAX_AGE closed it). `vmstat 1` runs beside each phase (its `r`, run queue, and user/system/idle/steal).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import calibration_load
from benchenv import ROOT, fresh_stack, make_keys
from calibration_seed import CUSTOMER, psql, seed


def stored(db: str) -> int:
    return int(
        psql(db, f"SELECT decisions FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'").strip() or 0
    )


def server_times(
    log_dir: Path,
) -> tuple[dict[int, tuple[float, float, int]], list[tuple[int, int, float, float]]]:
    requests: dict[int, tuple[float, float, int]] = {}
    collections: list[tuple[int, int, float, float]] = []
    for path in log_dir.glob("times-*.log"):
        pid = int(path.stem.split("-")[1])
        for line in path.read_text().splitlines():
            kind, *rest = line.split()
            if kind == "R" and rest[0] != "-":
                requests[int(rest[0])] = (float(rest[1]), float(rest[2]), pid)
            elif kind == "G":
                collections.append((pid, int(rest[0]), float(rest[1]), float(rest[2])))
    return requests, collections


def connections_opened(log_dir: Path) -> list[tuple[float, str]]:
    """When a request thread served on a database backend other than its last one (its first
    connection, `new`, or one opened again after its connection closed, `again`): (server start
    of that request, kind), every request counted, the untagged ones too."""
    opened: list[tuple[float, str]] = []
    for path in log_dir.glob("times-*.log"):
        last: dict[str, str] = {}
        lines = (line.split() for line in path.read_text().splitlines())
        # backend 0: the connection was closed at that request's end (DATABASE_CONN_MAX_AGE)
        for fields in sorted((f for f in lines if f[0] == "R" and f[5] != "0"), key=lambda f: float(f[2])):
            thread, backend = fields[4], fields[5]
            if last.get(thread) != backend:
                opened.append((float(fields[2]), "new" if thread not in last else "again"))
            last[thread] = backend
    return sorted(opened)


def _cpu_ms(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def cpu_times(master: int) -> dict[int, tuple[str, float]]:
    """CPU ms so far of every process, by pid: this client, the web processes, PostgreSQL's, redis-server."""
    out: dict[int, tuple[str, float]] = {}
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if pid == me:
            kind = "client"
        elif master in (pid, ppid):
            kind = "web"
        elif comm.startswith(("postgres", "postmaster")):
            kind = "postgres"
        elif comm.startswith("redis"):
            kind = "redis"
        else:
            kind = "other"
        out[pid] = (kind, _cpu_ms(pid))
    return out


def cpu_spent(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU ms between two snapshots by kind (a process that ended meanwhile is not counted)."""
    spent = {"client": 0.0, "web": 0.0, "postgres": 0.0, "redis": 0.0, "other": 0.0}
    for pid, (kind, ms) in after.items():
        spent[kind] += ms - (before[pid][1] if pid in before else 0.0)
    return spent


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, int(len(values) * q) - 1)] if values else float("nan")


def report(
    client: list[dict], server: dict, collections: list, slow_ms: float, first_n: int = 4, opened: tuple = ()
) -> dict:
    t0 = client[0]["scheduled"] if client else 0.0
    rows = []
    for c in client:
        s = server.get(c["i"])
        if s is None:
            continue
        start, end, pid = s
        rows.append(
            {
                "i": c["i"],
                "at": c["scheduled"] - t0,
                "total": (c["read"] - c["scheduled"]) * 1000,
                "put_lag": (c["queued"] - c["scheduled"]) * 1000,
                "conn_wait": (c["written"] - c["queued"]) * 1000,
                "server_wait": (start - c["written"]) * 1000,
                "server": (end - start) * 1000,
                "read_lag": (c["read"] - end) * 1000,
                "pid": pid,
                "start": start,
            }
        )
    out = {"requests": len(client), "matched": len(rows)}
    # Each web process's first --first requests by server start (what a worker's start costs
    # them): their times, all processes together.
    first = [
        r["total"]
        for pid in {r["pid"] for r in rows}
        for r in sorted((r for r in rows if r["pid"] == pid), key=lambda r: r["start"])[:first_n]
    ]
    if first:
        out["first"] = {
            "n": len(first),
            "median": round(statistics.median(first), 1),
            "max": round(max(first), 1),
        }
    for name in ("total", "put_lag", "conn_wait", "server_wait", "server", "read_lag"):
        values = [r[name] for r in rows]
        out[name] = {
            "p50": round(pct(values, 0.5), 1),
            "p99": round(pct(values, 0.99), 1),
            "max": round(max(values), 1),
        }
    slow = [r for r in rows if r["total"] > slow_ms]
    out["slow"] = len(slow)
    out["requests_by_pid"] = sorted(
        (sum(1 for r in rows if r["pid"] == pid) for pid in {r["pid"] for r in rows}), reverse=True
    )
    if slow:
        out["slow_mean"] = {
            name: round(statistics.fmean(r[name] for r in slow), 1)
            for name in ("total", "put_lag", "conn_wait", "server_wait", "server", "read_lag")
        }
        out["slow_by_pid"] = {
            str(pid): sum(1 for r in slow if r["pid"] == pid) for pid in {r["pid"] for r in slow}
        }
        # bursts: slow requests within 0.5 s of each other
        bursts: list[list[dict]] = []
        for r in sorted(slow, key=lambda r: r["at"]):
            if bursts and r["at"] - bursts[-1][-1]["at"] < 0.5:
                bursts[-1].append(r)
            else:
                bursts.append([r])
        out["bursts"] = [
            {
                "at_s": round(b[0]["at"], 2),
                "n": len(b),
                "worst": round(max(r["total"] for r in b), 1),
                "put_lag_max": round(max(r["put_lag"] for r in b), 1),
                "conn_wait_max": round(max(r["conn_wait"] for r in b), 1),
                "server_wait_max": round(max(r["server_wait"] for r in b), 1),
                "server_max": round(max(r["server"] for r in b), 1),
                "read_lag_max": round(max(r["read_lag"] for r in b), 1),
                "pids": sorted({r["pid"] for r in b}),
            }
            for b in bursts
        ]
    window = (client[0]["scheduled"], client[-1]["read"]) if client else (0, 0)
    # Connections opened during the phase, s from its start: a new backend's first request is
    # dearer (bench/README.md, The /calibrate tail).
    out["connections_opened"] = [
        (round(at - t0, 2), kind) for at, kind in opened if window[0] <= at <= window[1]
    ]
    inside = [g for g in collections if window[0] <= g[2] <= window[1]]
    out["server_gc"] = {
        f"gen{gen}": {
            "n": sum(1 for g in inside if g[1] == gen),
            "max_ms": round(max((g[3] for g in inside if g[1] == gen), default=0.0), 1),
        }
        for gen in (0, 1, 2)
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="tc_tail")
    parser.add_argument("--redis-db", default="3")
    parser.add_argument("--port", type=int, default=8750)
    parser.add_argument("--seed", type=int, default=100_000, help="decisions stored before the phases")
    parser.add_argument("--reuse", action="store_true", help="keep --db as it is (migrated and seeded)")
    parser.add_argument("--rate", type=float, default=150)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument("--phases", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--slow", type=float, default=100, help="ms: a request slower than this is explained")
    parser.add_argument(
        "--first", type=int, default=4, help="each web process's first requests, reported apart"
    )
    parser.add_argument(
        "--gunicorn-arg", action="append", default=[], help="added to gunicorn's command line"
    )
    args = parser.parse_args()
    calibration_load.PORT = args.port
    data_dir = Path(tempfile.mkdtemp(prefix="tc-tail-"))
    env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=data_dir, keep=args.reuse)
    env["TRUSTCAL_THREAD_SHARE"] = "0"
    keys = make_keys(env, customer=CUSTOMER, count=48)
    if stored(args.db) < args.seed:
        started = time.perf_counter()
        first = stored(args.db) + 1
        while first <= args.seed:
            last = min(args.seed, first + 250_000 - 1)
            seed(args.db, env, first, last)
            first = last + 1
        psql(args.db, "VACUUM (ANALYZE)")
        print(f"seeded {stored(args.db):,} in {time.perf_counter() - started:.1f} s", flush=True)
    log_dir = data_dir / "times"
    log_dir.mkdir()
    env["TAIL_PROBE_DIR"] = str(log_dir)
    web = calibration_load.gunicorn_start(
        env,
        workers=args.workers,
        threads=args.threads,
        extra=("-c", str(ROOT / "bench" / "tail_gunicorn.py"), *args.gunicorn_arg),
    )
    try:
        offset = 0
        for n in range(args.phases + 1):
            duration = args.warmup if n == 0 else args.duration
            vmstat = subprocess.Popen(
                ["vmstat", "-n", "1", str(int(duration) + 1)], stdout=subprocess.PIPE, text=True
            )
            cpu_before = cpu_times(web.pid)
            client = calibration_load.open_loop_traced(
                "/v1/calibrate", keys, rate=args.rate, duration=duration, first=offset
            )
            cpu_after = cpu_times(web.pid)
            offset += len(client["trace"])
            vm = vmstat.communicate()[0].splitlines()[2:]
            time.sleep(0.5)  # the processes' last lines
            server, collections = server_times(log_dir)
            opened = tuple(connections_opened(log_dir))
            out = report(client["trace"], server, collections, args.slow, args.first, opened)
            spent = cpu_spent(cpu_before, cpu_after)
            out["cpu_ms_per_request"] = {k: round(v / len(client["trace"]), 2) for k, v in spent.items()}
            out["cpu_share_of_2_cores"] = {k: round(v / 1000 / (2 * duration), 3) for k, v in spent.items()}
            out["client_gc"] = client["gc"]
            out["vmstat_r"] = [int(line.split()[0]) for line in vm]
            out["vmstat_us_sy_id_st"] = [
                tuple(int(x) for x in (line.split()[12:15] + line.split()[16:17])) for line in vm
            ]
            out["load"] = Path("/proc/loadavg").read_text().split()[:3]
            print(("warm-up " if n == 0 else f"phase {n} ") + json.dumps(out), flush=True)
    finally:
        web.terminate()
        web.wait()


if __name__ == "__main__":
    sys.exit(main())
