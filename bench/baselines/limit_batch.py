"""Raw-SQL limit for POST /log/batch: the chained insert (docs/reference/decisions.md) done set-wise in plain psycopg.

One thread, one connection, one transaction per batch of --batch decisions:
lock the customer's chain head (SELECT ... FOR UPDATE), draw the decisions' ids from their
sequence in one statement, COPY the decisions, compute each entry's sha256 over
previous_hash + canonical JSON in Python (the chain runs through the batch), COPY the audit
entries, UPDATE the chain head, COMMIT. Same tables and rows as limit_insert.py (its schema:
the decision's unique and time indexes, the entry's unique keys and decision index).
It keeps no aggregates, no Merkle tree and no events: it bounds what any set-wise chained
ingestion can reach on this database, not what the service must do.
"""

import argparse
import hashlib
import json
import random
import time

import psycopg
from _common import dsn_default, emit, latency_summary
from limit_insert import SCHEMA, ZERO_HASH, iso, make_decision, new_id
from psycopg.types.json import Jsonb

DECISION_COPY_COLUMNS = (
    "id",
    "customer_id",
    "decision_id",
    "user_id",
    "model_id",
    "model_version",
    "ai_recommendation",
    "ai_confidence",
    "user_decision",
    "initial_decision",
    "outcome",
    "followed_ai",
    "calibration_category",
    "context",
    "subgroups",
    "metadata",
    "timestamp",
    "logged_at",
)
ENTRY_COPY_COLUMNS = (
    "entry_id",
    "customer_id",
    "sequence",
    "type",
    "decision_pk",
    "hash",
    "previous_hash",
    "logged_at",
)
ENTRY_FIELDS = (
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


def chained_batch(conn, rows):
    customer_id = rows[0]["customer_id"]
    with conn.transaction():
        seq, prev = conn.execute(
            "SELECT last_sequence, last_hash FROM perf_log_chain_head WHERE customer_id = %s FOR UPDATE",
            (customer_id,),
        ).fetchone()
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT nextval(pg_get_serial_sequence('perf_log_decision', 'id')) FROM generate_series(1, %s)",
                (len(rows),),
            ).fetchall()
        ]
        cur = conn.cursor()
        columns = ", ".join(f'"{c}"' for c in DECISION_COPY_COLUMNS)
        with cur.copy(f"COPY perf_log_decision ({columns}) FROM STDIN") as copy:
            for pk, row in zip(ids, rows, strict=True):
                copy.write_row(
                    (
                        pk,
                        *(
                            Jsonb(row[c]) if c in ("subgroups", "metadata") else row[c]
                            for c in DECISION_COPY_COLUMNS[1:]
                        ),
                    )
                )
        entries = []
        for pk, row in zip(ids, rows, strict=True):
            seq += 1
            entry = {k: row[k] for k in ENTRY_FIELDS}
            entry |= {
                "entry_id": new_id("aud"),
                "sequence": seq,
                "type": "decision",
                "timestamp": iso(row["timestamp"]),
                "logged_at": iso(row["logged_at"]),
                "previous_hash": prev,
            }
            canonical = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            digest = hashlib.sha256((prev + canonical).encode()).hexdigest()
            entries.append(
                (entry["entry_id"], customer_id, seq, "decision", pk, digest, prev, row["logged_at"])
            )
            prev = digest
        with cur.copy(f"COPY perf_log_audit_entry ({', '.join(ENTRY_COPY_COLUMNS)}) FROM STDIN") as copy:
            for e in entries:
                copy.write_row(e)
        conn.execute(
            "UPDATE perf_log_chain_head SET last_sequence = %s, last_hash = %s WHERE customer_id = %s",
            (seq, prev, customer_id),
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=dsn_default(), help="default: $PERF_DSN or $DATABASE_URL")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    args = ap.parse_args()
    if not args.dsn:
        ap.error("--dsn (or PERF_DSN / DATABASE_URL) is required")
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(SCHEMA)
        conn.execute("TRUNCATE perf_log_audit_entry, perf_log_decision, perf_log_chain_head")
        conn.execute("INSERT INTO perf_log_chain_head VALUES (1, 0, %s)", (ZERO_HASH,))
        rnd = random.Random(1)
        latencies = []
        t_start = time.perf_counter()
        t_measure, t_stop = t_start + args.warmup, t_start + args.warmup + args.seconds
        while time.perf_counter() < t_stop:
            rows = [make_decision(1, rnd) for _ in range(args.batch)]  # the client's data: not timed
            t0 = time.perf_counter()
            chained_batch(conn, rows)
            t1 = time.perf_counter()
            if t0 >= t_measure and t1 <= t_stop:
                latencies.append(t1 - t0)
        from limit_insert import check_chain

        ok = check_chain(conn)
    decisions = len(latencies) * args.batch
    emit(
        {
            "bench": "limit_batch",
            "batch": args.batch,
            "seconds": args.seconds,
            "batches": len(latencies),
            "decisions_per_s": round(decisions / sum(latencies), 1) if latencies else 0.0,
            **latency_summary(latencies),
            "chain_ok": ok,
        }
    )


if __name__ == "__main__":
    main()
