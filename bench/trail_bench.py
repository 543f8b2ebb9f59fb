# ruff: noqa: S608 -- the SQL here is built from constants of this script (fixed column names), never from input
"""The audit-trail export and the offline verifier at scale, on a database that already holds a
chain (bench/chain1m.py's, PostgreSQL): GET /audit-trail/export against a plain COPY of the same
rows in the same run, then `python -m audit.offline_verify` on that export.

    .venv/bin/python bench/trail_bench.py --db tc_bench1m --customer bench1m \\
        --data-dir /tmp/tc_bench1m-data --rounds 3

The export ends at the chain's newest signed checkpoint (`to_sequence`), so the verifier is
given the checkpoint of the export's own size. Each round runs, each in a fresh process (its CPU
and peak RSS its own): the plain `COPY (SELECT <the entry columns> ... ORDER BY sequence) TO
STDOUT` of those rows through psycopg into /dev/null, then the export through the whole view
stack (Django's test client, no network) into /dev/null too; the pair alternates, so both meet
the same minutes of a noisy machine. Reported per round and as medians: wall seconds, the
client process's CPU seconds, the database backend's CPU seconds (read from /proc: the database
runs on this machine), bytes, and the ratio of the export's wall time to the COPY's. `--before`
adds, each round, the export as it was before audit/export_lines.py (every line rendered by the
database's jsonb); `--digest` exports again, untimed, for each one's SHA-256 (the bytes must be
the same). Then the offline phase writes the export to `--out` (untimed) and runs the offline
verifier on it once per `--jobs` value: wall, CPU of the verifier and its workers, exit status
and its first lines. One JSON line per phase; the load average with each.
"""

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HZ = os.sysconf("SC_CLK_TCK")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def _django(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{args.db}",
        REDIS_URL=f"redis://127.0.0.1:6379/{args.redis_db}",
        TRUSTCAL_DATA_DIR=str(args.data_dir),
        TRUSTCAL_RATE_LIMITS_ENABLED="false",
    )
    import django

    django.setup()


def _size(customer: str) -> int:
    """The newest signed checkpoint's size: where the export ends."""
    from audit.models import SignedCheckpoint

    size = (
        SignedCheckpoint.objects.filter(customer_id=customer)
        .order_by("-sequence")
        .values_list("sequence", flat=True)
        .first()
    )
    if not size:
        raise SystemExit(f"{customer} has no signed checkpoint")
    return int(size)


def copy_child(args: argparse.Namespace) -> dict:
    import psycopg

    from audit.chain import ENTRY_COLUMNS

    last = _size(args.customer)
    sql = (
        f"COPY (SELECT {', '.join(ENTRY_COLUMNS)} FROM audit_auditentry WHERE customer_id = %s "
        "AND sequence >= 1 AND sequence <= %s ORDER BY sequence) TO STDOUT"
    )
    dsn = f"postgresql://postgres@127.0.0.1:5432/{args.db}"
    with psycopg.connect(dsn) as conn, conn.cursor() as cur, open(os.devnull, "wb") as sink:
        pid = conn.info.backend_pid
        server, cpu, t0 = _backend_cpu(pid), time.process_time(), time.perf_counter()
        with cur.copy(sql, (args.customer, last)) as copy:
            size = sum(sink.write(data) for data in copy)
        return {
            "what": "plain COPY",
            "seconds": round(time.perf_counter() - t0, 2),
            "cpu_seconds": round(time.process_time() - cpu, 2),
            "server_cpu_seconds": round(_backend_cpu(pid) - server, 2),
            "bytes": size,
            "rows": last,
        }


def _rendered_by_database(customer_id: str, first: int, last: int | None):
    """The export as it was before audit/export_lines.py (`--child export-database`): every line
    rendered by the database's jsonb (audit.export._LINE) and forwarded as COPY sends it."""
    from django.db import connection

    from audit import export

    sql = (
        f"COPY (SELECT {export._LINE} FROM audit_auditentry WHERE customer_id = %s AND sequence >= %s "
        f"AND sequence <= %s ORDER BY sequence) TO STDOUT"
    )
    with connection.cursor() as cursor, cursor.cursor.copy(sql, [customer_id, first, last]) as copy:
        pending: list[bytes] = []
        size = 0
        for data in copy:
            pending.append(bytes(data))
            size += len(data)
            if size >= 1 << 20 and data[-1:] == b"\n":
                yield b"".join(pending).replace(b"\\\\", b"\\")
                pending, size = [], 0
        if pending:
            yield b"".join(pending).replace(b"\\\\", b"\\")


def export_child(args: argparse.Namespace, *, by_database: bool = False) -> dict:
    from django.db import connection
    from rest_framework.test import APIClient

    from audit import checkpoint_views
    from keys.services import api_key_create

    if by_database:
        checkpoint_views.entries_ndjson = _rendered_by_database

    last = _size(args.customer)
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION=f"Bearer {api_key_create(customer_id=args.customer, tier='enterprise').value}"
    )
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    server, cpu, t0 = _backend_cpu(pid), time.process_time(), time.perf_counter()
    size = 0
    out = args.out.with_suffix(".database.ndjson") if by_database else args.out
    with open(
        out if args.keep else os.devnull, "wb"
    ) as handle:  # a file only when asked: the COPY's sink is /dev/null
        response = client.get(f"/v1/audit-trail/export?to_sequence={last}")
        assert response.status_code == 200, response.status_code
        for chunk in response.streaming_content:
            handle.write(chunk)
            size += len(chunk)
    seconds, cpu, server = time.perf_counter() - t0, time.process_time() - cpu, _backend_cpu(pid) - server
    digest = hashlib.sha256()
    for chunk in (
        client.get(f"/v1/audit-trail/export?to_sequence={last}").streaming_content if args.digest else ()
    ):
        digest.update(chunk)  # a second export, untimed: its digest shows whether the bytes changed
    return {
        "what": "export (lines by the database)" if by_database else "export",
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "server_cpu_seconds": round(server, 2),
        "bytes": size,
        "sha256": digest.hexdigest() if args.digest else None,
        "rows": last,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "baseline_rss_mib": round(baseline, 1),
    }


def _child(args: argparse.Namespace, what: str, *, keep: bool = False) -> dict:
    command = [sys.executable, __file__, "--child", what, "--db", args.db, "--customer", args.customer,
               "--data-dir", str(args.data_dir), "--redis-db", args.redis_db, "--out", str(args.out)]  # fmt: skip
    command += ["--keep"] * keep + ["--digest"] * args.digest
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_average"] = _load()
    return result


def export(args: argparse.Namespace) -> dict:
    rounds = []
    for _ in range(args.rounds):
        copy, exported = _child(args, "copy"), _child(args, "export")
        rounds.append(
            {"copy": copy, "export": exported, "ratio": round(exported["seconds"] / copy["seconds"], 2)}
        )
        if args.before:
            before = _child(args, "export-database")
            rounds[-1].update(before=before, ratio_before=round(before["seconds"] / copy["seconds"], 2))
        print(json.dumps(rounds[-1]), flush=True)

    def median(what: str, key: str) -> float:
        return round(statistics.median(r[what][key] for r in rounds), 2)

    if args.before:
        before = round(statistics.median(r["before"]["seconds"] for r in rounds), 2)
        digests = {r["before"]["sha256"] for r in rounds} | {r["export"]["sha256"] for r in rounds}
        extra = {"before_seconds_median": before, "ratio_before": round(before / median("copy", "seconds"), 2),
                 "before_server_cpu_median": round(statistics.median(r["before"]["server_cpu_seconds"] for r in rounds), 2),
                 "same_bytes_as_before": len(digests) == 1 if args.digest else None}  # fmt: skip
    else:
        extra = {}
    return {
        "phase": "export",
        **extra,
        "rows": rounds[0]["copy"]["rows"],
        "copy_seconds_median": median("copy", "seconds"),
        "export_seconds_median": median("export", "seconds"),
        "ratio_of_medians": round(median("export", "seconds") / median("copy", "seconds"), 2),
        "ratios": [r["ratio"] for r in rounds],
        "copy_cpu_median": median("copy", "cpu_seconds"),
        "copy_server_cpu_median": median("copy", "server_cpu_seconds"),
        "export_cpu_median": median("export", "cpu_seconds"),
        "export_server_cpu_median": median("export", "server_cpu_seconds"),
        "export_bytes": rounds[-1]["export"]["bytes"],
        "copy_bytes": rounds[-1]["copy"]["bytes"],
        "export_peak_rss_mib": max(r["export"]["peak_rss_mib"] for r in rounds),
    }


def offline(args: argparse.Namespace) -> list[dict]:
    from rest_framework.test import APIClient

    from audit.models import SignedCheckpoint
    from keys.services import api_key_create

    last = _size(args.customer)
    print(json.dumps({"written for the verifier (untimed)": _child(args, "export", keep=True)}), flush=True)
    folder = Path(args.out).parent
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION=f"Bearer {api_key_create(customer_id=args.customer, tier='enterprise').value}"
    )
    (folder / "key.json").write_bytes(client.get("/v1/audit-trail/checkpoint-key").content)
    note = SignedCheckpoint.objects.get(customer_id=args.customer, sequence=last).note
    (folder / "checkpoint.txt").write_text(note, encoding="utf-8")
    results = []
    for jobs in args.jobs.split(","):
        command = [sys.executable, "-m", "audit.offline_verify", "--key", str(folder / "key.json"),
                   "--checkpoint", str(folder / "checkpoint.txt"), "--jobs", jobs, str(args.out)]  # fmt: skip
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = _load()
        t0 = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env={"PATH": os.environ.get("PATH", "")}, capture_output=True, text=True)  # fmt: skip
        seconds, after = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
        results.append({
            "phase": "offline",
            "jobs": int(jobs),
            "lines": last,
            "seconds": round(seconds, 2),
            "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
            "exit": done.returncode,
            "output": (done.stdout or done.stderr).strip().splitlines()[:3],
            "load_average_before": load,
            "load_average": _load(),
        })  # fmt: skip
        print(json.dumps(results[-1]), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="tc_bench1m")
    parser.add_argument("--customer", default="bench1m")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/tc_bench1m-data"))
    parser.add_argument("--redis-db", default="9")
    parser.add_argument("--rounds", type=int, default=3, help="alternating COPY / export pairs")
    parser.add_argument("--jobs", default="2", help="offline verifier --jobs values, comma-separated")
    parser.add_argument("--phase", default="export,offline")
    parser.add_argument("--out", type=Path, default=Path("/tmp/trustcal-trail-bench/export.ndjson"))
    parser.add_argument(
        "--before",
        action="store_true",
        help="also the export with every line rendered by the database, as before",
    )
    parser.add_argument(
        "--digest", action="store_true", help="export again, untimed, for each export's SHA-256"
    )
    parser.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)  # the export written to --out
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _django(args)
    if args.child:
        if args.child == "copy":
            print(json.dumps(copy_child(args)))
        else:
            print(json.dumps(export_child(args, by_database=args.child == "export-database")))
        return
    if "export" in args.phase:
        result = export(args)
        result["load_average"] = _load()
        print(json.dumps(result), flush=True)
    if "offline" in args.phase:
        offline(args)


if __name__ == "__main__":
    main()
