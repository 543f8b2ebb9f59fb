"""Raw-SQL limit for POST /trust-score at organisation scope, in plain psycopg, on the service's
own tables of an existing database (run it against a benchmark's database, e.g. after
calibration_bench.py has seeded it).

Each call does the least a plain program would to answer the organisation's figures over the
last --days days (docs/reference/calibration.md, Organisation figures and Confidence check):
one GROUP BY user over the window's daily aggregate rows (the 31 summed columns; the
organisation's sums, the reviewer clusters and the risk users all follow from these per-user
rows in a few microseconds of arithmetic, not counted), then the confidence check's read: the
latest 10,000 decisions with a confidence and an outcome, grouped by (confidence, AI right).
--user U: the per-user figure instead (the user's at most --days rows summed).
N threads, one connection each; --rate R: open-loop pacing at R calls/s in total, latency
from the scheduled start (no coordinated omission).
"""

import argparse
import datetime as dt
import time

import psycopg
from _common import dsn_default, emit, latency_summary, run_workers

COLUMNS = [
    "n",
    "followed",
    "overtrust",
    "undertrust",
    "conf_n",
    "conf_sum",
    "outcome_n",
    "ai_right_n",
    "followed_wrong",
    "overrode_right",
    "gap_sum",
    "scored_n",
    "scored_followed",
    "p_sum",
    "q_sum",
    "a_conf_sum",
    "oo_n",
    "wo_sum",
    "wo_sq",
    "fwo_sum",
    "wu_sum",
    "wu_sq",
    "uwu_sum",
    "cy_n",
    "brier_sum",
    "sw_den",
    "sw_num",
    "rair_den",
    "rair_num",
    "rsr_den",
    "rsr_num",
]
SUMS = ", ".join(f"SUM({name})" for name in COLUMNS)
WINDOW = "customer_id = %s AND model_key = '*' AND day >= %s AND day <= %s"
PER_USER = f"SELECT user_id, {SUMS} FROM calibration_userdailyaggregate WHERE {WINDOW} GROUP BY user_id"  # noqa: S608
ONE_USER = f"SELECT {SUMS} FROM calibration_userdailyaggregate WHERE {WINDOW} AND user_id = %s"  # noqa: S608
CONFIDENCE_CHECK = """
SELECT ai_confidence, outcome = ai_recommendation, count(*) FROM (
    SELECT ai_confidence, outcome, ai_recommendation FROM audit_decision
    WHERE customer_id = %s AND timestamp >= %s AND timestamp < %s
      AND ai_confidence IS NOT NULL AND outcome IS NOT NULL
    ORDER BY timestamp DESC, decision_id DESC LIMIT 10000) latest
GROUP BY 1, 2
"""


def call(conn, args, first, last):
    if args.user:
        conn.execute(ONE_USER, (args.customer, first, last, args.user)).fetchall()
        return
    conn.execute(PER_USER, (args.customer, first, last)).fetchall()
    start = dt.datetime.combine(first, dt.time(), dt.UTC)
    end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), dt.UTC)
    conn.execute(CONFIDENCE_CHECK, (args.customer, start, end)).fetchall()


def worker(idx, args, t_start, t_measure, t_stop, latencies, errors):
    last = dt.datetime.now(dt.UTC).date()
    first = last - dt.timedelta(days=args.days - 1)
    step = args.threads / args.rate if args.rate else 0.0
    scheduled = t_start + idx * step / args.threads
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        while (now := time.perf_counter()) < t_stop:
            if step:
                scheduled += step
                if scheduled > now:
                    time.sleep(scheduled - now)
                t0 = scheduled
            else:
                t0 = now
            try:
                call(conn, args, first, last)
            except psycopg.Error:
                errors.append(1)
                continue
            t1 = time.perf_counter()
            if t0 >= t_measure and t1 <= t_stop:
                latencies.append(t1 - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=dsn_default(), help="default: $PERF_DSN or $DATABASE_URL")
    ap.add_argument("--customer", default="bench")
    ap.add_argument("--user", default="", help="a user's figures instead of the organisation's")
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--rate", type=float, default=0.0, help="target calls/s in total (0: flat out)")
    args = ap.parse_args()
    if not args.dsn:
        ap.error("--dsn (or PERF_DSN / DATABASE_URL) is required")
    t_start = time.perf_counter()
    t_measure = t_start + args.warmup
    t_stop = t_measure + args.seconds
    latencies, errors = run_workers(worker, args.threads, 1, args, t_start, t_measure, t_stop)
    emit(
        {
            "limit": "trust_score_user" if args.user else "trust_score_organisation",
            "threads": args.threads,
            "rate": args.rate or None,
            "calls_per_s": round(len(latencies) / args.seconds, 1),
            "errors": errors,
            **latency_summary(latencies),
        }
    )


if __name__ == "__main__":
    main()
