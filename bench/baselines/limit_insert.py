"""Raw-SQL limit for POST /log: the chained decision insert (docs/reference/decisions.md) in plain psycopg.

N threads, each with its own connection, loop over one transaction each:
lock the customer's chain head (SELECT ... FOR UPDATE), INSERT the decision,
INSERT the audit entry (sequence + sha256 over previous_hash + canonical JSON,
computed in Python), UPDATE the chain head, COMMIT.
--no-chain: only the decision INSERT (autocommit, one round trip).
--rate R: open-loop pacing at R tx/s in total; latency counts from the scheduled
start, so a stall is not hidden (no coordinated omission).
"""

import argparse
import hashlib
import json
import os
import random
import time
from datetime import UTC, datetime

import psycopg
from _common import DECISION_COLUMNS, dsn_default, emit, latency_summary, run_workers
from psycopg.types.json import Jsonb

ZERO_HASH = "0" * 64
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS perf_log_decision ({DECISION_COLUMNS});
CREATE INDEX IF NOT EXISTS perf_log_decision_ts ON perf_log_decision (customer_id, "timestamp");
CREATE TABLE IF NOT EXISTS perf_log_chain_head (
    customer_id bigint PRIMARY KEY, last_sequence bigint NOT NULL, last_hash char(64) NOT NULL);
CREATE TABLE IF NOT EXISTS perf_log_audit_entry (
    id bigserial PRIMARY KEY,
    entry_id text NOT NULL UNIQUE,
    customer_id bigint NOT NULL,
    sequence bigint NOT NULL,
    type text NOT NULL,
    decision_pk bigint NOT NULL REFERENCES perf_log_decision (id),
    hash char(64) NOT NULL,
    previous_hash char(64) NOT NULL,
    logged_at timestamptz NOT NULL,
    UNIQUE (customer_id, sequence));
CREATE INDEX IF NOT EXISTS perf_log_audit_entry_decision ON perf_log_audit_entry (decision_pk);
"""
INSERT_DECISION = """
INSERT INTO perf_log_decision (customer_id, decision_id, user_id, model_id, model_version,
    ai_recommendation, ai_confidence, user_decision, initial_decision, outcome, followed_ai,
    calibration_category, context, subgroups, metadata, "timestamp", logged_at)
VALUES (%(customer_id)s, %(decision_id)s, %(user_id)s, %(model_id)s, %(model_version)s,
    %(ai_recommendation)s, %(ai_confidence)s, %(user_decision)s, %(initial_decision)s,
    %(outcome)s, %(followed_ai)s, %(calibration_category)s, %(context)s, %(subgroups)s,
    %(metadata)s, %(timestamp)s, %(logged_at)s)
RETURNING id
"""
LOCK_HEAD = "SELECT last_sequence, last_hash FROM perf_log_chain_head WHERE customer_id = %s FOR UPDATE"
INSERT_ENTRY = """
INSERT INTO perf_log_audit_entry (entry_id, customer_id, sequence, type, decision_pk, hash,
    previous_hash, logged_at) VALUES (%s, %s, %s, 'decision', %s, %s, %s, %s)
"""
UPDATE_HEAD = "UPDATE perf_log_chain_head SET last_sequence = %s, last_hash = %s WHERE customer_id = %s"


def new_id(prefix):
    return f"{prefix}_{time.time_ns():x}{os.urandom(5).hex()}"


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def make_decision(customer_id, rnd):
    now = datetime.now(UTC)
    ai = rnd.choice(("approve", "deny"))
    followed = rnd.random() < 0.8
    conf = round(rnd.random(), 4)
    return {
        "customer_id": customer_id,
        "decision_id": new_id("dec"),
        "user_id": f"user_{rnd.randrange(500)}",
        "model_id": "credit-risk-v3",
        "model_version": "2026.11.2",
        "ai_recommendation": ai,
        "ai_confidence": conf,
        "user_decision": ai if followed else ("deny" if ai == "approve" else "approve"),
        "initial_decision": rnd.choice(("approve", "deny")),
        "outcome": None,
        "followed_ai": followed,
        "calibration_category": (
            "OVERTRUSTING"
            if followed and conf < 0.5
            else "UNDERTRUSTING"
            if not followed and conf >= 0.8
            else "CALIBRATED"
        ),
        "context": "Applicant requested a credit line of 12,000 EUR; income verified, "
        f"debt-to-income {rnd.randrange(5, 60)}%, reviewer checked documents.",
        "subgroups": {"gender": rnd.choice(("female", "male")), "age_group": "26-40"},
        "metadata": {"channel": "branch", "request_id": os.urandom(8).hex()},
        "timestamp": now,
        "logged_at": now,
    }


def chained_insert(conn, row):
    with conn.transaction():
        seq, prev = conn.execute(LOCK_HEAD, (row["customer_id"],)).fetchone()
        (pk,) = conn.execute(
            INSERT_DECISION, row | {"subgroups": Jsonb(row["subgroups"]), "metadata": Jsonb(row["metadata"])}
        ).fetchone()
        entry = {
            k: row[k]
            for k in (
                "decision_id",
                "user_id",
                "model_id",
                "model_version",
                "ai_recommendation",
                "ai_confidence",
                "user_decision",
                "followed_ai",
                "calibration_category",
                "outcome",
                "context",
                "subgroups",
            )
        }
        entry |= {
            "entry_id": new_id("aud"),
            "sequence": seq + 1,
            "type": "decision",
            "timestamp": iso(row["timestamp"]),
            "logged_at": iso(row["logged_at"]),
            "previous_hash": prev,
        }
        canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256((prev + canonical).encode()).hexdigest()
        conn.execute(
            INSERT_ENTRY, (entry["entry_id"], row["customer_id"], seq + 1, pk, digest, prev, row["logged_at"])
        )
        conn.execute(UPDATE_HEAD, (seq + 1, digest, row["customer_id"]))


def plain_insert(conn, row):
    conn.execute(
        INSERT_DECISION, row | {"subgroups": Jsonb(row["subgroups"]), "metadata": Jsonb(row["metadata"])}
    )


def worker(idx, args, t_start, t_measure, t_stop, latencies, errors):
    rnd = random.Random(idx)
    customer_id = 1 + idx % args.customers
    step = args.threads / args.rate if args.rate else 0.0
    scheduled = t_start + idx * step / args.threads
    op = plain_insert if args.no_chain else chained_insert
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
                op(conn, make_decision(customer_id, rnd))
            except psycopg.Error:
                errors.append(1)
                continue
            t1 = time.perf_counter()
            if t0 >= t_measure and t1 <= t_stop:
                latencies.append(t1 - t0)


def check_chain(conn):
    """Gapless sequences from 1 and every previous_hash equal to the prior entry's hash."""
    bad_seq = conn.execute("""
        SELECT count(*) FROM (SELECT customer_id FROM perf_log_audit_entry GROUP BY customer_id
        HAVING min(sequence) <> 1 OR max(sequence) <> count(*)) s""").fetchone()[0]
    bad_link = conn.execute(
        """
        SELECT count(*) FROM perf_log_audit_entry a LEFT JOIN perf_log_audit_entry p
          ON p.customer_id = a.customer_id AND p.sequence = a.sequence - 1
        WHERE a.previous_hash <> coalesce(p.hash, %s)""",
        (ZERO_HASH,),
    ).fetchone()[0]
    return bad_seq == 0 and bad_link == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=dsn_default(), help="default: $PERF_DSN or $DATABASE_URL")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--processes", type=int, default=1, help="spread the threads over this many processes")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--customers", type=int, default=1, help="chain heads to spread threads over")
    ap.add_argument("--rate", type=float, default=0.0, help="target tx/s in total (0: flat out)")
    ap.add_argument("--no-chain", action="store_true")
    args = ap.parse_args()
    if not args.dsn:
        ap.error("--dsn (or PERF_DSN / DATABASE_URL) is required")

    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(SCHEMA)
        conn.execute("TRUNCATE perf_log_audit_entry, perf_log_decision, perf_log_chain_head")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO perf_log_chain_head VALUES (%s, 0, %s)",
                [(c, ZERO_HASH) for c in range(1, args.customers + 1)],
            )

    t_start = time.perf_counter()
    t_measure, t_stop = t_start + args.warmup, t_start + args.warmup + args.seconds
    latencies, errors = run_workers(worker, args.threads, args.processes, args, t_start, t_measure, t_stop)

    result = {
        "bench": "limit_insert",
        "mode": "no_chain" if args.no_chain else "chain",
        "threads": args.threads,
        "processes": args.processes,
        "customers": args.customers,
        "rate_target": args.rate or None,
        "seconds": args.seconds,
        "tx": len(latencies),
        "tx_per_s": round(len(latencies) / args.seconds, 1),
        **latency_summary(latencies),
        "errors": errors,
    }
    if not args.no_chain:
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            result["chain_ok"] = check_chain(conn)
    emit(result)


if __name__ == "__main__":
    main()
