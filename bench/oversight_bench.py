"""GET /v1/oversight/review-effort and GET /v1/oversight/vigilance on 1,000,000 decisions of one
customer (20 % timed, 2 % probes) on PostgreSQL: p50 and p99 of 50 calls each, next to the same
SQL statements run by a bare psycopg connection in the same run (the plain-tool limit: the
statements alone, without Django, authentication or the statistics on the rows).

    .venv/bin/python bench/oversight_bench.py                 # 1,000,000 decisions, 50 calls
    .venv/bin/python bench/oversight_bench.py --decisions 100000 --calls 20

The decisions are inserted with one INSERT ... SELECT over generate_series (the endpoints read
only the decision table; logging a million decisions through the service is ingest_bench's
subject): 200 reviewers of whom 10 agree in 1-3 s, four models and one group without a model,
timestamps spread evenly over the last 90 days in the order they are inserted, as decisions arrive
(so the 30-day review-effort window holds the newest third of the table),
30 % of real decisions with an outcome, 70 % of probes known_wrong. Then VACUUM ANALYZE, as
autovacuum would. The calls are in-process (Django's test client with a real API key): the
service's time without an HTTP server. Prints one JSON line last."""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchenv import fresh_stack, make_keys, sh

CUSTOMER = "bench-oversight"

LOAD_SQL = """
INSERT INTO audit_decision (
    customer_id, decision_id, user_id, model_id, model_version, ai_recommendation, ai_confidence,
    user_decision, initial_decision, outcome, context, subgroups, metadata, timestamp, logged_at,
    followed_ai, calibration_category, payload_fingerprint, review_started_at, review_seconds,
    probe, probe_kind, probe_corrected)
SELECT %(customer)s, 'b' || g, 'user-' || lpad((g %% 200)::text, 3, '0'),
       CASE WHEN g %% 5 = 0 THEN NULL ELSE 'model-' || (g %% 4) END, '1', 'approve', round(r1::numeric, 2),
       CASE WHEN followed THEN 'approve' ELSE 'deny' END, NULL,
       CASE WHEN probe THEN correct WHEN r5 < 0.3 THEN CASE WHEN r6 < 0.8 THEN 'approve' ELSE 'deny' END END,
       '', '{}', '{}', ts, ts, followed,
       CASE
         WHEN (CASE WHEN probe THEN correct WHEN r5 < 0.3 THEN CASE WHEN r6 < 0.8 THEN 'approve' ELSE 'deny' END END) IS NULL
           THEN 'CALIBRATED'
         WHEN followed AND (CASE WHEN probe THEN correct ELSE CASE WHEN r6 < 0.8 THEN 'approve' ELSE 'deny' END END) <> 'approve'
           THEN 'OVERTRUSTING'
         WHEN NOT followed AND (CASE WHEN probe THEN correct ELSE CASE WHEN r6 < 0.8 THEN 'approve' ELSE 'deny' END END) = 'approve'
           THEN 'UNDERTRUSTING'
         ELSE 'CALIBRATED' END,
       md5(g::text), NULL,
       CASE WHEN timed THEN CASE WHEN g %% 200 < 10 THEN 1 + r4 * 2 ELSE 5 + r4 * 90 END END,
       CASE WHEN probe THEN json_build_object('kind', kind, 'correct_decision', correct)::jsonb END,
       CASE WHEN probe THEN kind END,
       CASE WHEN probe THEN (CASE WHEN followed THEN 'approve' ELSE 'deny' END) = correct END
FROM (
    SELECT g, r1, r4, r5, r6, ts, probe, timed, kind,
           CASE WHEN kind = 'known_wrong' THEN 'deny' ELSE 'approve' END AS correct,
           r2 < CASE WHEN g %% 200 < 10 THEN 0.95 ELSE 0.8 END AS followed
    FROM (
        SELECT g, random() AS r1, random() AS r2, random() AS r4, random() AS r5, random() AS r6,
               now() - (1 - g::float8 / %(total)s) * interval '90 days' - random() * interval '1 minute' AS ts,
               random() < 0.02 AS probe, random() < 0.2 AS timed,
               CASE WHEN random() < 0.7 THEN 'known_wrong' ELSE 'known_right' END AS kind
        FROM generate_series(%(start)s::bigint, %(stop)s::bigint) AS g
    ) AS raw
) AS d
"""


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p99_ms": round(p99 * 1000, 1)}


def _time(call, calls: int) -> dict[str, float]:
    call()  # warm: connection, plans, imports
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return _percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--db", default="tc_h18_bench")
    parser.add_argument("--redis-db", default="3")
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of the statements")
    args = parser.parse_args()

    load_average = os.getloadavg()
    env = fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=f"/tmp/{args.db}-data")
    key = make_keys(env, customer=CUSTOMER, count=1)[0]
    os.environ.update(
        {k: v for k, v in env.items() if k in ("DATABASE_URL", "REDIS_URL", "TRUSTCAL_DATA_DIR")}
    )
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    os.environ["TRUSTCAL_RATE_LIMITS_ENABLED"] = "false"

    import django

    django.setup()
    import psycopg
    from django.db import connection
    from django.test import Client

    dsn = env["DATABASE_URL"].replace("postgres://", "postgresql://")
    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as plain:
        step = 250_000
        for start in range(1, args.decisions + 1, step):
            stop = min(args.decisions, start + step - 1)
            plain.execute(
                LOAD_SQL, {"customer": CUSTOMER, "start": start, "stop": stop, "total": args.decisions}
            )
        plain.execute("VACUUM ANALYZE audit_decision")
        counts = plain.execute(
            "SELECT count(*), count(review_seconds), count(probe_kind) FROM audit_decision WHERE customer_id = %s",
            [CUSTOMER],
        ).fetchone()
    load_seconds = round(time.perf_counter() - started, 1)

    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    def review_effort() -> None:
        r = client.get("/v1/oversight/review-effort")
        assert r.status_code == 200, r.content

    def vigilance() -> None:
        r = client.get("/v1/oversight/vigilance")
        assert r.status_code == 200, r.content

    service = {"review_effort": _time(review_effort, args.calls), "vigilance": _time(vigilance, args.calls)}

    # The limit: the endpoint's own statements, captured once, replayed by a bare connection.
    from django.test.utils import CaptureQueriesContext

    statements = {}
    for name, call in (("review_effort", review_effort), ("vigilance", vigilance)):
        with CaptureQueriesContext(connection) as captured:
            call()
        statements[name] = [q["sql"] for q in captured.captured_queries if "audit_decision" in q["sql"]]
        assert statements[name], f"no statement of {name} captured"
    limit = {}
    with psycopg.connect(dsn, autocommit=True) as plain:
        plain.execute("SET work_mem = '32MB'")  # as the service's reads set for their transaction
        for name, sqls in statements.items():

            def run(sqls=sqls) -> None:
                for sql in sqls:
                    plain.execute(sql).fetchall()

            limit[name] = _time(run, args.calls)
            if args.explain:
                for sql in sqls:
                    plan = plain.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql).fetchall()
                    print(f"--- {name}\n" + "\n".join(row[0] for row in plan), file=sys.stderr)

    ratio = {
        name: round(service[name]["p50_ms"] / limit[name]["p50_ms"], 2) if limit[name]["p50_ms"] else None
        for name in service
    }
    connection.close()
    sh("psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {args.db}", check=False)
    print(
        json.dumps(
            {
                "decisions": counts[0],
                "timed": counts[1],
                "probes": counts[2],
                "load_seconds": load_seconds,
                "calls": args.calls,
                "service": service,
                "limit_sql_only": limit,
                "p50_ratio_service_to_limit": ratio,
                "aims_p99_ms": {"review_effort": 250, "vigilance": 100},
                "load_average_before": [round(x, 2) for x in load_average],
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
            }
        )
    )


if __name__ == "__main__":
    main()
