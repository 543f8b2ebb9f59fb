"""The whole service's memory across report renders (docs/deploy.md, Memory): `manage.py serve`
(what `make run` starts) on a fresh data folder, 10,000 decisions logged over HTTP, then 20 PDF
exports of them one after another. After each, the resident memory of every process of the
service (serve itself, the Celery worker and its pool processes, gunicorn and its worker) is read
from /proc: RSS, and PSS, which shares each shared page among the processes that map it (the
pool processes are forked from the worker, so their RSS counts the worker's pages again).

    .venv/bin/python bench/memory_bench.py [--decisions 10000] [--exports 20] [--port 8601]

The embedded default (SQLite, the file broker) unless DATABASE_URL / REDIS_URL are set. The aim:
the service's memory after the 20th export within 10 % of its memory after the first. Prints
each process's figures idle, after the first export and after the last, and one JSON line last.
"""

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def _children(pid: int) -> list[int]:
    """Children forked by any of the process's threads (Celery forks new pool processes from
    a thread other than its main one: /proc/PID/task/PID/children alone misses them)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return sorted(set(out))


def _tree(pid: int) -> list[int]:
    out = [pid]
    for child in _children(pid):
        out += _tree(child)
    return out


def _role(pid: int, parent: dict[int, int]) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "gone"
    text = b" ".join(argv).decode(errors="replace")
    above = Path(f"/proc/{parent.get(pid, 0)}/cmdline")
    parent_text = above.read_bytes().decode(errors="replace") if above.exists() else ""
    if "celery" in text:
        return "celery pool process" if "celery" in parent_text else "celery worker (with beat)"
    if "gunicorn" in text:
        return "gunicorn worker" if "gunicorn" in parent_text else "gunicorn master"
    return "manage.py serve" if "serve" in text else text[:40]


def _memory_kb(pid: int) -> tuple[int, int]:
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def snapshot(root: int) -> dict:
    pids = list(dict.fromkeys(_tree(root)))  # a process listed under two threads counts once
    parent = {child: pid for pid in pids for child in _children(pid)}
    processes = []
    for pid in pids:
        rss, pss = _memory_kb(pid)
        processes.append({"pid": pid, "role": _role(pid, parent), "rss_mb": round(rss / 1024, 1),
                          "pss_mb": round(pss / 1024, 1)})  # fmt: skip
    return {
        "processes": processes,
        "rss_mb": round(sum(p["rss_mb"] for p in processes), 1),
        "pss_mb": round(sum(p["pss_mb"] for p in processes), 1),
    }


def _call(base: str, method: str, path: str, key: str | None = None, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        return json.load(exc)


def _wait(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"timed out waiting for {what}")


def _decisions(n: int) -> list[dict]:
    now = dt.datetime.now(dt.UTC)
    out = []
    for i in range(n):
        ai = "approve" if i % 2 else "deny"
        followed = i % 5 != 0
        out.append({
            "decision_id": f"mem-{i}", "user_id": f"officer-{i % 40:02d}", "model_id": "loan-approval",
            "ai_recommendation": ai, "ai_confidence": round(0.3 + (i % 7) / 10, 2),
            "user_decision": ai if followed else ("deny" if ai == "approve" else "approve"),
            "outcome": ai if i % 3 else ("deny" if ai == "approve" else "approve"),
            "review_seconds": 5 + i % 50, "context": f"application {i}",
            "subgroups": {"gender": "female" if i % 2 else "male", "age_group": ["18-34", "35-54", "55+"][i % 3]},
            "timestamp": (now - dt.timedelta(days=20) * (1 - i / n)).isoformat().replace("+00:00", "Z"),
        })  # fmt: skip
    return out


def _print(label: str, snap: dict) -> None:
    print(f"{label}: RSS {snap['rss_mb']:,.1f} MiB, PSS {snap['pss_mb']:,.1f} MiB")
    for p in snap["processes"]:
        print(f"    {p['role']:<28} pid {p['pid']:>7}  RSS {p['rss_mb']:>7.1f}  PSS {p['pss_mb']:>7.1f}")


def run(args: argparse.Namespace, data_dir: str) -> dict:
    base = f"http://127.0.0.1:{args.port}"
    env = {**os.environ, "TRUSTCAL_DATA_DIR": data_dir, "TRUSTCAL_BIND": f"127.0.0.1:{args.port}",
           "DJANGO_SETTINGS_MODULE": "config.settings.local", "PYTHONUNBUFFERED": "1"}  # fmt: skip
    log = open(Path(data_dir) / "serve.log", "w")  # noqa: SIM115 (closed with the service)
    serve = subprocess.Popen([PYTHON, "manage.py", "serve"], cwd=ROOT, env=env, stdout=log, stderr=log,
                             start_new_session=True)  # fmt: skip
    try:
        _wait(
            lambda: _call(base, "GET", "/v1/health")["checks"]["workers"].get("online", 0) >= 1,
            180,
            "a worker",
        )
        made = subprocess.run([PYTHON, "manage.py", "create_api_key", "--customer-id", "bench-memory", "--tier",
                               "enterprise"], cwd=ROOT, env=env, capture_output=True, text=True, check=True)  # fmt: skip
        key = made.stdout.strip().splitlines()[-1]
        time.sleep(args.settle)
        idle = snapshot(serve.pid)
        _print("idle", idle)
        items = _decisions(args.decisions)
        for start in range(0, len(items), 1000):
            answer = _call(base, "POST", "/v1/log/batch", key, {"decisions": items[start : start + 1000]})
            assert answer.get("rejected") == 0, answer
        today = dt.datetime.now(dt.UTC).date()
        period = {"from": (today - dt.timedelta(days=29)).isoformat(), "to": today.isoformat()}
        after: list[dict] = []
        seconds: list[float] = []
        for n in range(args.exports):
            began = time.monotonic()
            job = _call(
                base,
                "POST",
                "/v1/export",
                key,
                {"template": "eu_ai_act", "format": "pdf", "time_period": period},
            )
            assert "export_id" in job, job
            path = f"/v1/export/{job['export_id']}"
            done = lambda path=path: _call(base, "GET", path, key)["status"] in ("completed", "failed")  # noqa: E731
            _wait(done, 900, "the export")
            status = _call(base, "GET", path, key)["status"]
            assert status == "completed", _call(base, "GET", path, key)
            seconds.append(round(time.monotonic() - began, 1))
            time.sleep(args.settle)  # the pool process is replaced right after its task
            after.append(snapshot(serve.pid))
            print(f"export {n + 1}: {seconds[-1]} s; service RSS {after[-1]['rss_mb']:,.1f} MiB, "
                  f"PSS {after[-1]['pss_mb']:,.1f} MiB", flush=True)  # fmt: skip
        _print("after the first export", after[0])
        _print(f"after export {len(after)}", after[-1])
        growth = {m: round((after[-1][m] - after[0][m]) / after[0][m] * 100, 1) for m in ("rss_mb", "pss_mb")}
        return {
            "decisions": args.decisions, "exports": args.exports, "export_seconds": seconds,
            "idle": idle, "after_first": after[0], "after_last": after[-1], "growth_percent": growth,
            "within_10_percent": all(abs(v) <= 10 for v in growth.values()),
            "database": "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite",
        }  # fmt: skip
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=10_000)
    parser.add_argument("--exports", type=int, default=20)
    parser.add_argument("--port", type=int, default=8601)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to wait before each reading")
    parser.add_argument("--keep", action="store_true", help="keep the data folder (its serve.log)")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="tc-memory-")
    load_before = os.getloadavg()
    try:
        result = run(args, data_dir)
    finally:
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    result["load_average"] = {"before": [round(x, 2) for x in load_before],
                              "after": [round(x, 2) for x in os.getloadavg()]}  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
