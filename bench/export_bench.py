"""Compliance exports at 100,000 decisions (PostgreSQL): time and peak memory of each format,
side by side with the plain COPY of the same columns (bench/baselines/limit_copy.py) in the
same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_export_bench \\
        .venv/bin/python bench/export_bench.py --decisions 100000

Seeds the decisions once through the POST /log/batch service (same shape as limit_copy's
rows: 500 reviewers, 3 models, October 2026, two thirds with an outcome), then renders each
format of the eu_ai_act report in a fresh process (so its peak RSS is its own) and reports
seconds and MiB. Needs /tmp/perf-venv (pip install -r bench/baselines/requirements.txt).
"""

import argparse
import datetime as dt
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PERF_DIR = Path(os.environ.get("BENCH_PERF_DIR", ROOT / "bench" / "baselines"))
CUSTOMER = "bench-export"
PERIOD = ("2026-10-01", "2026-10-31")


def _django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()


def _decision(i: int, n: int, rnd: random.Random) -> dict:
    ai_yes, follow, r, conf = rnd.random() < 0.55, rnd.random() < 0.8, rnd.random(), rnd.random()
    ai = "approve" if ai_yes else "deny"
    start = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
    body = {
        "decision_id": f"dec_{i:012x}",
        "user_id": f"user_{i % 500}",
        "model_id": f"credit-risk-v{1 + i % 3}",
        "model_version": f"2026.11.{i % 5}",
        "ai_recommendation": ai,
        "ai_confidence": round(conf, 4),
        "user_decision": ai if follow else ("deny" if ai_yes else "approve"),
        "context": (
            f"Applicant {i} requested a credit line of {1000 + i % 50 * 500} EUR; income verified, "
            f'debt-to-income {r * 60:.1f}%, "manual review" ' + "documents checked; " * (1 + i % 6)
        ),
        "subgroups": {
            "gender": "female" if i % 2 == 0 else "male",
            "age_group": ["18-25", "26-40", "41-60", "60+"][i % 4],
        },
        "metadata": {"channel": "branch"},
        "timestamp": (start + dt.timedelta(days=31) * (i / n)).isoformat().replace("+00:00", "Z"),
    }
    if r < 0.5:
        body["initial_decision"] = "approve" if r < 0.3 else "deny"
    if r > 0.33:
        body["outcome"] = "deny" if r > 0.85 else "approve"
    return body


def seed(n: int) -> float | None:
    from audit import services as audit_services
    from audit.models import ChainHead
    from keys.models import Customer

    customer, _ = Customer.objects.get_or_create(id=CUSTOMER)
    have = ChainHead.objects.filter(customer=customer).values_list("decisions", flat=True).first() or 0
    if have == n:
        return None
    if have:
        raise SystemExit(f"{CUSTOMER} holds {have} decisions, not {n}: use a fresh database")
    rnd = random.Random(7)
    started = time.perf_counter()
    for offset in range(0, n, 1000):
        items = [_decision(i, n, rnd) for i in range(offset, min(n, offset + 1000))]
        audit_services.decisions_log_batch(customer=customer, items=items)
    return round(time.perf_counter() - started, 1)


def verify() -> dict:
    """The whole chain rechecked (what the first report after the logging pays; later
    reports recheck only what was appended since the checkpoint), then the checkpoint set."""
    from audit import verify as audit_verify
    from audit.models import ChainCheckpoint
    from keys.models import Customer

    customer = Customer.objects.get(pk=CUSTOMER)
    ChainCheckpoint.objects.filter(customer=customer).delete()
    t0 = time.perf_counter()
    result, _ = audit_verify.chain_verify_incremental(customer)
    return {
        "format": "chain verification (cold)",
        "seconds": round(time.perf_counter() - t0, 2),
        "entries": result.entries_checked,
        "valid": result.valid,
    }


def render(fmt: str, template: str) -> dict:
    """One export in this process: seconds and peak RSS (baseline after imports)."""
    if fmt == "verify":
        return verify()
    if fmt == "pdf":
        import compliance.pdf  # noqa: F401  (WeasyPrint and matplotlib in the baseline)
    from compliance import services
    from compliance.models import ExportJob
    from config.inputs import time_range
    from keys.models import Customer

    start, end = time_range(*PERIOD)
    job = ExportJob.objects.create(
        customer=Customer.objects.get(pk=CUSTOMER),
        template=template,
        format=fmt,
        time_period={"from": PERIOD[0], "to": PERIOD[1]},
        period_start=start,
        period_end=end,
        filters={},
    )
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    c0 = time.process_time()
    services.export_run(export_id=job.pk)
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0  # this process's CPU: what a busy machine does not inflate
    job.refresh_from_db()
    assert job.status == "completed", job.error
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "format": fmt,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "bytes": job.size_bytes,
        "peak_rss_mib": round(peak, 1),
        "baseline_rss_mib": round(baseline, 1),
    }


def _last_json(output: str) -> dict:
    return json.loads([line for line in output.splitlines() if line.startswith("{")][-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--template", default="eu_ai_act")
    parser.add_argument("--perf-python", default="/tmp/perf-venv/bin/python")
    parser.add_argument("--formats", default="verify,csv,json,pdf", help="comma-separated, in this order")
    parser.add_argument("--render", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a PostgreSQL database (e.g. tc_export_bench)")
    _django()
    if args.render:
        print(json.dumps(render(args.render, args.template)))
        return
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    seeded = seed(args.decisions)
    print(f"seeded {args.decisions} decisions" + (f" in {seeded} s" if seeded else " (reused)"))
    copy = subprocess.run(
        [args.perf_python, str(PERF_DIR / "limit_copy.py"), "--rows", str(args.decisions)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PERF_DSN": os.environ["DATABASE_URL"]},
    )
    limit = _last_json(copy.stdout)
    results = []
    for fmt in args.formats.split(","):
        out = subprocess.run(
            [sys.executable, __file__, "--render", fmt, "--template", args.template],
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(_last_json(out.stdout))
    print(f"COPY limit: {limit['rows']} rows, {limit['bytes']} bytes in {limit['seconds']} s")
    print("| format | seconds | CPU seconds | x COPY | bytes | peak RSS MiB | baseline RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        if "bytes" not in r:
            print(f"| {r['format']}: {r['entries']} entries | {r['seconds']} | | | | | |")
            continue
        ratio = r["seconds"] / limit["seconds"]
        print(
            f"| {r['format']} | {r['seconds']} | {r['cpu_seconds']} | {ratio:.1f} | {r['bytes']} | "
            f"{r['peak_rss_mib']} | {r['baseline_rss_mib']} |"
        )
    print(json.dumps({"limit_copy": limit, "exports": results}))


if __name__ == "__main__":
    main()
