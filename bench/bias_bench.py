# DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_bias_bench .venv/bin/python bench/bias_bench.py --decisions 1000000
"""Bias detection at scale (issue 5).

Seeds N decisions of one model for one customer straight into PostgreSQL (INSERT ...
SELECT generate_series), seeds the bias statistics from them with one
aggregate INSERT (the same keys and digests the services write), then measures in-process
through the full Django/DRF stack (django.test.Client, no network):
  - POST /detect-bias p50/p99 (each call attaches, analyses 3 attributes over the last 30
    days, stores an alert and an event);
  - GET /bias/subgroups p50/p99 (all attributes of the model, last 30 days);
  - POST /log throughput, sequential, with and without subgroups.
Rate limits are switched off for the run. The database is dropped and recreated.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ["TRUSTCAL_RATE_LIMITS_ENABLED"] = "false"

CUSTOMER = "bench"
MODEL = "credit-v1"


def reset_database(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(base + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


SEED_DECISIONS = """
INSERT INTO audit_decision (customer_id, decision_id, user_id, model_id, model_version, ai_recommendation,
    ai_confidence, user_decision, initial_decision, outcome, context, subgroups, metadata, timestamp, logged_at,
    followed_ai, calibration_category, payload_fingerprint)
SELECT %(customer)s, 'seed-' || g, 'u' || (g %% 500), %(model)s, NULL, ai, conf, human, NULL, outcome, '',
       jsonb_build_object('gender', gender, 'age_group', age, 'ethnicity', eth), '{}'::jsonb, ts, ts,
       ai = human,
       CASE WHEN outcome IS NOT NULL THEN
              CASE WHEN ai = human AND outcome <> ai THEN 'OVERTRUSTING'
                   WHEN ai <> human AND outcome = ai THEN 'UNDERTRUSTING' ELSE 'CALIBRATED' END
            WHEN ai = human AND conf < 0.5 THEN 'OVERTRUSTING'
            WHEN ai <> human AND conf >= 0.8 THEN 'UNDERTRUSTING' ELSE 'CALIBRATED' END,
       md5(g::text) || md5(g::text)
FROM (
  SELECT g, gender, age, eth, ts, conf, ai,
         CASE WHEN r2 < 0.8 THEN ai WHEN ai = 'approve' THEN 'deny' ELSE 'approve' END AS human,
         CASE WHEN r3 < 0.4 THEN (CASE WHEN r4 < 0.5 THEN 'approve' ELSE 'deny' END) END AS outcome
  FROM (
    SELECT g, gender, age, eth, ts, conf, r2, r3, r4,
           CASE WHEN r1 < (CASE gender WHEN 'female' THEN 0.45 ELSE 0.6 END) THEN 'approve' ELSE 'deny' END AS ai
    FROM (
      SELECT g,
             (ARRAY['female', 'male', 'nonbinary'])[1 + g %% 3] AS gender,
             (ARRAY['18-25', '26-40', '41-65', '65+'])[1 + (g / 3) %% 4] AS age,
             (ARRAY['a', 'b', 'c', 'd', 'e'])[1 + (g / 12) %% 5] AS eth,
             now() - make_interval(days => g %% %(days)s, mins => (g * 7) %% 1440) AS ts,
             round((random())::numeric, 3)::float AS conf,
             random() AS r1, random() AS r2, random() AS r3, random() AS r4
      FROM generate_series(%(start)s, %(stop)s) AS g
    ) base
  ) with_ai
) final
"""

# The statistics rows the services would have written, keyed and digested the same way
# (bias.stats.StatKey.digest: the dimensions joined with U+001F, SHA-256 hex).
SEED_STATS = """
INSERT INTO bias_subgroupdailystat AS s (customer_id, key_hash, day, model_id, model_version, attribute, group_value,
    ai_value, human_value, category, human_correct, ai_correct, count, confidence_count, confidence_micros)
SELECT customer_id,
       encode(sha256(convert_to(concat_ws(chr(31), day::text, model_id, model_version, attribute, group_value,
              ai_value, human_value, category, human_correct::text, ai_correct::text), 'UTF8')), 'hex'),
       day, model_id, model_version, attribute, group_value, ai_value, human_value, category, human_correct,
       ai_correct, count(*), count(conf), coalesce(sum(round(conf * 1000000)), 0)
FROM (
  SELECT d.customer_id, (d.timestamp AT TIME ZONE 'UTC')::date AS day, coalesce(d.model_id, '') AS model_id,
         coalesce(d.model_version, '') AS model_version, a.key AS attribute, a.value AS group_value,
         lower(trim(d.ai_recommendation)) AS ai_value, lower(trim(d.user_decision)) AS human_value,
         d.calibration_category AS category,
         CASE WHEN d.outcome IS NULL THEN 0 WHEN lower(trim(d.user_decision)) = lower(trim(d.outcome)) THEN 1 ELSE 2 END
           AS human_correct,
         CASE WHEN d.outcome IS NULL THEN 0 WHEN lower(trim(d.ai_recommendation)) = lower(trim(d.outcome)) THEN 1 ELSE 2 END
           AS ai_correct,
         d.ai_confidence AS conf
  FROM audit_decision d CROSS JOIN LATERAL jsonb_each_text(d.subgroups) a
  WHERE d.customer_id = %(customer)s AND d.decision_id LIKE 'seed-%%' AND d.id > %(after_id)s
) x
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
ON CONFLICT (customer_id, key_hash) DO UPDATE SET count = s.count + EXCLUDED.count,
  confidence_count = s.confidence_count + EXCLUDED.confidence_count,
  confidence_micros = s.confidence_micros + EXCLUDED.confidence_micros
"""


def seed(total: int, days: int) -> None:
    from django.db import connection, transaction

    chunk = 250_000
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM audit_decision")
        after_id = cursor.fetchone()[0]
        for start in range(1, total + 1, chunk):
            stop = min(total, start + chunk - 1)
            with transaction.atomic():
                cursor.execute(
                    SEED_DECISIONS,
                    {"customer": CUSTOMER, "model": MODEL, "days": days, "start": start, "stop": stop},
                )
        with transaction.atomic():
            cursor.execute(SEED_STATS, {"customer": CUSTOMER, "after_id": after_id})
        cursor.execute("ANALYZE")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def timed(fn, n: int) -> list[float]:
    out = []
    for i in range(n):
        started = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - started) * 1000)
    return out


def report(name: str, samples: list[float]) -> None:
    print(
        f"{name:42s} n={len(samples):5d} p50={statistics.median(samples):7.2f} ms  p99={percentile(samples, 99):7.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=90, help="history spread over this many days")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--logs", type=int, default=1000)
    parser.add_argument("--reuse", action="store_true", help="keep the database seeded by a previous run")
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("set DATABASE_URL=postgres://.../tc_bias_bench (the database is dropped and recreated)")
    if not args.reuse:
        reset_database(url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from keys.services import api_key_create

    call_command("migrate", verbosity=0)
    key = api_key_create(customer_id=CUSTOMER, tier="enterprise").value
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    started = time.perf_counter()
    if not args.reuse:
        seed(args.decisions, args.days)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM audit_decision WHERE customer_id = %s", [CUSTOMER])
        args.decisions = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM bias_subgroupdailystat WHERE customer_id = %s", [CUSTOMER])
        stat_rows = cursor.fetchone()[0]
    os.system("uptime")  # noqa: S605 - the load on a shared machine explains the tail
    print(f"{'reused' if args.reuse else 'seeded'} {args.decisions:,} decisions over {args.days} days in {time.perf_counter() - started:.1f} s; "
          f"{stat_rows:,} statistics rows")  # fmt: skip

    def detect(i: int) -> None:
        body = {
            "decision_id": f"seed-{i + 1}",
            "subgroups": {"gender": "female", "age_group": "26-40", "ethnicity": "b"},
        }
        response = client.post("/v1/detect-bias", body, content_type="application/json")
        assert response.status_code == 200, response.content

    def floor(i: int) -> None:
        response = client.get("/v1/bias/feed", {"model_id": "no-such-model"})
        assert response.status_code == 200, response.content

    def subgroups(i: int) -> None:
        response = client.get("/v1/bias/subgroups", {"model_id": MODEL})
        assert response.status_code == 200, response.content

    for _ in range(20):  # warm-up: connections, caches, plans
        detect(0)
        subgroups(0)
    sample = client.post(
        "/v1/detect-bias",
        {"decision_id": "seed-1", "subgroups": {"gender": "female"}},
        content_type="application/json",
    ).json()
    print(f"sample detection: severity={sample['severity']} findings={len(sample['findings'])}")
    report("floor: GET /bias/feed (empty, 2 queries)", timed(floor, args.requests))
    report("POST /detect-bias (3 attributes)", timed(detect, args.requests))
    report("GET /bias/subgroups?model_id (all attrs)", timed(subgroups, args.requests))

    def log_with(i: int, with_subgroups: bool) -> None:
        body = {"user_id": f"u{i % 50}", "model_id": MODEL, "ai_recommendation": "approve",
                "user_decision": "approve" if i % 3 else "deny", "ai_confidence": 0.7}  # fmt: skip
        if with_subgroups:
            body["subgroups"] = {"gender": ["female", "male"][i % 2], "age_group": "26-40", "ethnicity": "c"}
        response = client.post("/v1/log", body, content_type="application/json")
        assert response.status_code == 201, response.content

    for label, flag in (
        ("POST /log without subgroups", False),
        ("POST /log with 3 subgroup attributes", True),
    ):
        samples = timed(lambda i, flag=flag: log_with(i, flag), args.logs)
        report(label, samples)
        print(
            f"{'':42s} throughput {1000 * len(samples) / sum(samples):7.1f} req/s (sequential, one process)"
        )


if __name__ == "__main__":
    main()
