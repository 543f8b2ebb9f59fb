"""PostgreSQL COPY limit for the CSV export (the csv report format, docs/reference/reports.md).

Fills perf_export_decision with N decisions of one customer spread over October 2026
(refilled when its row count differs), then times
COPY (SELECT <the csv report columns> ... ORDER BY timestamp) TO STDOUT WITH CSV HEADER,
streamed through psycopg into /dev/null. Timestamps are rendered as the API renders
them (ISO 8601 UTC with Z) and followed_ai as true/false, so the bytes match an export.
"""

import argparse
import os
import statistics
import time

import psycopg
from _common import DECISION_COLUMNS, dsn_default, emit, max_rss_mib

FILL = f"""
DROP TABLE IF EXISTS perf_export_decision;
CREATE TABLE perf_export_decision ({DECISION_COLUMNS});
INSERT INTO perf_export_decision (customer_id, decision_id, user_id, model_id, model_version,
    ai_recommendation, ai_confidence, user_decision, initial_decision, outcome, followed_ai,
    calibration_category, context, subgroups, metadata, "timestamp", logged_at)
SELECT 1,
    'dec_' || lpad(to_hex(i), 12, '0'),
    'user_' || (i % 500),
    'credit-risk-v' || (1 + i % 3),
    '2026.11.' || (i % 5),
    CASE WHEN ai_yes THEN 'approve' ELSE 'deny' END,
    round(conf::numeric, 4)::float8,
    CASE WHEN ai_yes = follow THEN 'approve' ELSE 'deny' END,
    CASE WHEN r < 0.5 THEN (CASE WHEN r < 0.3 THEN 'approve' ELSE 'deny' END) END,
    CASE WHEN r > 0.6 THEN (CASE WHEN r > 0.85 THEN 'deny' ELSE 'approve' END) END,
    follow,
    CASE WHEN follow AND conf < 0.5 THEN 'OVERTRUSTING'
         WHEN NOT follow AND conf >= 0.8 THEN 'UNDERTRUSTING' ELSE 'CALIBRATED' END,
    'Applicant ' || i || ' requested a credit line of ' || (1000 + i % 50 * 500) ||
        ' EUR; income verified, debt-to-income ' || round((r * 60)::numeric, 1) ||
        '%, "manual review" ' || repeat('documents checked; ', 1 + i % 6),
    jsonb_build_object('gender', CASE WHEN i % 2 = 0 THEN 'female' ELSE 'male' END,
                       'age_group', (ARRAY['18-25', '26-40', '41-60', '60+'])[1 + i % 4]),
    jsonb_build_object('channel', 'branch', 'request_id', md5(i::text)),
    ts, ts + interval '2 seconds'
FROM (SELECT i, random() AS conf, random() < 0.55 AS ai_yes, random() < 0.8 AS follow,
             random() AS r,
             timestamptz '2026-10-01 00:00:00+00' + ((i - 1)::float8 / N_ROWS) * interval '31 days' AS ts
      FROM generate_series(1, N_ROWS) AS i) g;
CREATE INDEX perf_export_decision_ts ON perf_export_decision (customer_id, "timestamp");
"""  # noqa: S608 (constant column definitions, no input)
EXPORT = """
COPY (
    SELECT decision_id,
           to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "timestamp",
           user_id, model_id, model_version, ai_recommendation, ai_confidence, user_decision,
           initial_decision, followed_ai::text AS followed_ai, calibration_category, outcome, context
    FROM perf_export_decision
    WHERE customer_id = 1 AND "timestamp" >= '2026-10-01' AND "timestamp" < '2026-11-01'
    ORDER BY "timestamp"
) TO STDOUT WITH (FORMAT csv, HEADER)
"""


def ensure_rows(conn, n):
    exists = conn.execute("SELECT to_regclass('perf_export_decision') IS NOT NULL").fetchone()[0]
    if exists and conn.execute("SELECT count(*) FROM perf_export_decision").fetchone()[0] == n:
        return None
    t0 = time.perf_counter()
    conn.execute(FILL.replace("N_ROWS", str(int(n))))  # no bind parameters: several statements in one call
    conn.execute("VACUUM ANALYZE perf_export_decision")
    return round(time.perf_counter() - t0, 2)


def export_once(conn):
    nbytes = 0
    with conn.cursor() as cur, open(os.devnull, "wb") as sink:
        t0 = time.perf_counter()
        with cur.copy(EXPORT) as copy:
            for block in copy:
                sink.write(block)
                nbytes += len(block)
        return time.perf_counter() - t0, cur.rowcount, nbytes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=dsn_default(), help="default: $PERF_DSN or $DATABASE_URL")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="timed exports; the median is reported")
    args = ap.parse_args()
    if not args.dsn:
        ap.error("--dsn (or PERF_DSN / DATABASE_URL) is required")

    with psycopg.connect(args.dsn, autocommit=True) as conn:
        fill_s = ensure_rows(conn, args.rows)
        runs = [export_once(conn) for _ in range(args.repeat)]
    seconds = statistics.median(s for s, _, _ in runs)
    rows, nbytes = runs[0][1], runs[0][2]
    emit(
        {
            "bench": "limit_copy",
            "rows": rows,
            "bytes": nbytes,
            "seconds": round(seconds, 4),
            "rows_per_s": round(rows / seconds),
            "mib_per_s": round(nbytes / seconds / 2**20, 1),
            "runs_s": [round(s, 4) for s, _, _ in runs],
            "client_max_rss_mib": max_rss_mib(),
            "filled_in_s": fill_s,
        }
    )


if __name__ == "__main__":
    main()
