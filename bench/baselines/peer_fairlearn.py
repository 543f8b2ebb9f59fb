"""The peer for bias/amplification analysis (docs/reference/bias.md, docs/reference/fairness.md): what a user would pick instead.

Fills perf_bias_decision with N decisions of one model (refilled when its row count
differs) with a known disparity: the AI approves 60% of men and 40% of women, the
humans 70% and 30% (the worked example of docs/reference/fairness.md: amplification 0.25). Then times
  (a) loading the rows into pandas (COPY ... CSV streamed through psycopg, read_csv)
      + fairlearn demographic_parity_difference and MetricFrame(selection_rate) by gender;
  (b) the same figures from one SQL GROUP BY query,
and checks that both give the same values to 1e-9. The SQL query also counts the AI's
favourable recommendations, so it reports the amplification score as well (a fairlearn
user would need a second MetricFrame for that, about doubling (a)).
"""

import argparse
import io
import statistics
import time

import pandas as pd
import psycopg
from _common import dsn_default, emit, max_rss_mib
from fairlearn.metrics import MetricFrame, demographic_parity_difference, selection_rate

FAVOURABLE = [
    "approve",
    "approved",
    "accept",
    "accepted",
    "yes",
    "hire",
    "hired",
    "grant",
    "granted",
    "pass",
    "positive",
    "true",
    "1",
]  # the default favourable list of docs/reference/bias.md
FILL = """
DROP TABLE IF EXISTS perf_bias_decision;
CREATE TABLE perf_bias_decision (
    id bigserial PRIMARY KEY, customer_id bigint NOT NULL, model_id text NOT NULL,
    gender text NOT NULL, ai_recommendation text NOT NULL, user_decision text NOT NULL);
SELECT setseed(0.42);
INSERT INTO perf_bias_decision (customer_id, model_id, gender, ai_recommendation, user_decision)
SELECT 1, 'credit-risk-v3', g,
       CASE WHEN u < (CASE g WHEN 'male' THEN 0.6 ELSE 0.4 END) THEN 'approve' ELSE 'deny' END,
       CASE WHEN u < (CASE g WHEN 'male' THEN 0.7 ELSE 0.3 END) THEN 'approve' ELSE 'deny' END
FROM (SELECT CASE WHEN i % 2 = 0 THEN 'male' ELSE 'female' END AS g, random() AS u
      FROM generate_series(1, N_ROWS) AS i) s;
"""
SELECT = (
    "SELECT gender, user_decision FROM perf_bias_decision "
    "WHERE customer_id = 1 AND model_id = 'credit-risk-v3'"
)
GROUP_BY = """
SELECT gender, count(*),
       count(*) FILTER (WHERE lower(btrim(user_decision)) = ANY(%(fav)s)),
       count(*) FILTER (WHERE lower(btrim(ai_recommendation)) = ANY(%(fav)s))
FROM perf_bias_decision WHERE customer_id = 1 AND model_id = 'credit-risk-v3'
GROUP BY gender
"""


def ensure_rows(conn, n):
    exists = conn.execute("SELECT to_regclass('perf_bias_decision') IS NOT NULL").fetchone()[0]
    if exists and conn.execute("SELECT count(*) FROM perf_bias_decision").fetchone()[0] == n:
        return None
    t0 = time.perf_counter()
    conn.execute(FILL.replace("N_ROWS", str(int(n))))
    conn.execute("VACUUM ANALYZE perf_bias_decision")
    return round(time.perf_counter() - t0, 2)


def amplification(ai_rate, human_rate):
    """Amplification score for a binary outcome from per-group favourable rates; privileged = AI's favourite."""
    priv, unpriv = sorted(ai_rate, key=ai_rate.get, reverse=True)[:2]
    a, h = ai_rate[priv] - ai_rate[unpriv], human_rate[priv] - human_rate[unpriv]
    d_ai, amp = abs(a), (a > 0) * (h - a)  # the deny terms mirror the approve terms
    return 0.0 if d_ai == 1 else round(min(max(amp / (1 - d_ai), 0.0), 1.0), 4)


def with_pandas(conn):
    t0 = time.perf_counter()
    buf = io.BytesIO()
    with conn.cursor() as cur, cur.copy(f"COPY ({SELECT}) TO STDOUT WITH (FORMAT csv)") as copy:
        for block in copy:
            buf.write(block)
    buf.seek(0)
    df = pd.read_csv(buf, names=["gender", "user_decision"])
    t_loaded = time.perf_counter()
    final = df.user_decision.str.strip().str.lower().isin(FAVOURABLE).astype(int)
    frame = MetricFrame(metrics=selection_rate, y_true=final, y_pred=final, sensitive_features=df.gender)
    figures = {
        "rows": len(df),
        "selection_rate": frame.by_group.to_dict(),
        "dpd": demographic_parity_difference(final, final, sensitive_features=df.gender),
    }
    t_done = time.perf_counter()
    final.groupby(df.gender).mean()  # for scale: the same rates with a plain pandas groupby
    t_groupby = time.perf_counter() - t_done
    return figures, {"load": t_loaded - t0, "total": t_done - t0, "groupby": t_groupby}


def with_sql(conn):
    t0 = time.perf_counter()
    rows = conn.execute(GROUP_BY, {"fav": FAVOURABLE}).fetchall()
    elapsed = time.perf_counter() - t0
    final = {g: fav / n for g, n, fav, _ in rows}
    ai = {g: fav / n for g, n, _, fav in rows}
    return {
        "rows": sum(n for _, n, _, _ in rows),
        "selection_rate": final,
        "dpd": max(final.values()) - min(final.values()),
        "ai_rate": ai,
    }, elapsed


def max_difference(a, b):
    assert a["selection_rate"].keys() == b["selection_rate"].keys()
    return float(
        max(
            [abs(a["dpd"] - b["dpd"]), abs(a["rows"] - b["rows"])]
            + [abs(a["selection_rate"][g] - b["selection_rate"][g]) for g in a["selection_rate"]]
        )
    )


def timed_runs(fn, repeat, budget_s):
    """Up to `repeat` runs, skipping a further one that would end past budget_s."""
    runs, t_start = [], time.perf_counter()
    while len(runs) < repeat:
        runs.append(fn())
        spent = time.perf_counter() - t_start
        if spent + spent / len(runs) > budget_s:
            break
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=dsn_default(), help="default: $PERF_DSN or $DATABASE_URL")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each; medians are reported")
    ap.add_argument("--budget", type=float, default=20.0, help="seconds of measuring for each of (a) and (b)")
    args = ap.parse_args()
    if not args.dsn:
        ap.error("--dsn (or PERF_DSN / DATABASE_URL) is required")

    with psycopg.connect(args.dsn, autocommit=True) as conn:
        fill_s = ensure_rows(conn, args.rows)
        runs_a = timed_runs(lambda: with_pandas(conn), args.repeat, args.budget)
        runs_b = timed_runs(lambda: with_sql(conn), args.repeat, args.budget)
    (fig_a, _), (fig_b, _) = runs_a[-1], runs_b[-1]
    a_s = statistics.median(t["total"] for _, t in runs_a)
    b_s = statistics.median(t for _, t in runs_b)
    diff = max_difference(fig_a, fig_b)
    emit(
        {
            "bench": "peer_fairlearn",
            "rows": fig_b["rows"],
            "runs": len(runs_a),
            "pandas_fairlearn_s": round(a_s, 4),
            "pandas_load_s": round(statistics.median(t["load"] for _, t in runs_a), 4),
            "pandas_groupby_only_s": round(statistics.median(t["groupby"] for _, t in runs_a), 4),
            "sql_group_by_s": round(b_s, 4),
            "speedup_sql": round(a_s / b_s, 1),
            "selection_rate": {g: round(v, 6) for g, v in sorted(fig_b["selection_rate"].items())},
            "demographic_parity_difference": round(fig_b["dpd"], 6),
            "max_abs_difference": diff,
            "agree_1e-9": diff < 1e-9,
            "sql_ai_rate": {g: round(v, 6) for g, v in sorted(fig_b["ai_rate"].items())},
            "sql_amplification_score": amplification(fig_b["ai_rate"], fig_b["selection_rate"]),
            "client_max_rss_mib": max_rss_mib(),
            "filled_in_s": fill_s,
        }
    )


if __name__ == "__main__":
    main()
