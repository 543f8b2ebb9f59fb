# DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_fairness_bench .venv/bin/python bench/fairness_bench.py --decisions 1000000
"""Fairness signals and amplification at scale (issue 6).

Seeds N decisions of one model with subgroups straight into PostgreSQL and the bias app's
daily statistics from them (the seeding of bench/bias_bench.py: the same keys and digests
the services write), then measures in-process through the full Django/DRF stack
(django.test.Client, no network):
  - POST /model-fairness-signals p50/p99 (validate, store, analyse over the correlated
    decisions, alert, events);
  - POST /bias/amplification/analyze/:id p50/p99;
  - the analysis alone (the statistics query + the arithmetic) p50/p99, and the number of
    statistics rows it reads.
The per-customer signal and analyze limits are emptied between samples (outside the timer).
The database is dropped and recreated.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent))

import bias_bench  # noqa: E402  (seeding and percentile helpers of the bias bench)


def percentile(samples: list[float], q: float) -> float:
    return bias_bench.percentile(samples, q)


def report(name: str, samples: list[float]) -> None:
    print(
        f"{name:50s} n={len(samples):5d} p50={statistics.median(samples):7.2f} ms  p99={percentile(samples, 99):7.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=90, help="history spread over this many days")
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("set DATABASE_URL=postgres://.../tc_fairness_bench (the database is dropped and recreated)")
    bias_bench.reset_database(url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.test import Client

    from config.timeutils import isoformat
    from fairness import amplification, selectors, services
    from fairness.models import FairnessSignal
    from keys.services import api_key_create

    call_command("migrate", verbosity=0)
    key = api_key_create(customer_id=bias_bench.CUSTOMER, tier="enterprise").value
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    started = time.perf_counter()
    bias_bench.seed(args.decisions, args.days)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM bias_subgroupdailystat WHERE customer_id = %s", [bias_bench.CUSTOMER]
        )
        stat_rows = cursor.fetchone()[0]
    print(f"seeded {args.decisions:,} decisions over {args.days} days in {time.perf_counter() - started:.1f} s; "
          f"{stat_rows:,} statistics rows")  # fmt: skip

    def body(i: int) -> dict:
        return {
            "externalToolId": "fairlearn", "externalToolVersion": "0.15.0", "modelId": bias_bench.MODEL,
            "metricName": "demographic_parity", "metricValue": 0.15, "threshold": 0.1, "passesThreshold": False,
            "protectedAttribute": "gender", "privilegedGroup": "male", "unprivilegedGroup": "female",
            "sampleSize": args.decisions, "confidenceInterval": {"lower": 0.12, "upper": 0.18},
            "rawPayload": {"difference": 0.15, "by_group": {"male": 0.6, "female": 0.45}, "i": i},
            "signalTimestamp": isoformat(django.utils.timezone.now()),
        }  # fmt: skip

    def timed(fn, n: int) -> list[float]:
        out = []
        for i in range(n):
            services.signal_limiter.reset()
            services.analyze_limiter.reset()
            t0 = time.perf_counter()
            fn(i)
            out.append((time.perf_counter() - t0) * 1000)
        return out

    def ingest(i: int) -> None:
        response = client.post("/v1/model-fairness-signals", body(i), content_type="application/json")
        assert response.status_code == 201, response.content

    for i in range(10):  # warm-up: connections, plans
        ingest(i)
    first = FairnessSignal.objects.order_by("ingested_at").first()
    assert first is not None
    a = first.analysis
    print(f"sample analysis: status={a['status']} score={a['amplificationScore']} risk={a['riskLevel']} "
          f"D_ai={a['modelDisparityObserved']} D_h={a['humanDisparity']} decisions={a['decisionsAnalyzed']:,}")  # fmt: skip
    report("POST /model-fairness-signals", timed(ingest, args.requests))

    def analyze(i: int) -> None:
        response = client.post(f"/v1/bias/amplification/analyze/{first.id}")
        assert response.status_code == 200, response.content

    report("POST /bias/amplification/analyze/:id", timed(analyze, args.requests))

    def read(i: int) -> None:
        assert client.get(f"/v1/model-fairness-signals/{first.id}").status_code == 200

    report("GET /model-fairness-signals/:id (stack baseline)", timed(read, args.requests))

    def commit_only(i: int) -> None:
        with transaction.atomic():
            FairnessSignal.objects.filter(pk=first.pk).update(metric_value=first.metric_value)

    report("one-row UPDATE + COMMIT (write baseline)", timed(commit_only, args.requests))

    rows_read = [0]

    def analysis_only(i: int) -> None:
        counts = selectors.correlated_counts(first, analyzed_at=django.utils.timezone.now())
        rows_read[0] = len(counts)
        amplification.analyse(
            counts, metric_value=first.metric_value, privileged="male", unprivileged="female"
        )

    report("analysis alone (statistics query + arithmetic)", timed(analysis_only, args.requests))
    print(
        f"the analysis reads {rows_read[0]} aggregated (group, ai, human) rows from {stat_rows:,} statistics rows"
    )


if __name__ == "__main__":
    main()
