# ruff: noqa: S608 -- the SQL here is built from constants of this script (fixed column names and expressions), never from input
"""A database holding one customer's 1,000,000-decision format-2 chain, for the erasure and
verify benchmarks (docs/reference/erasure.md), and the erasure measured on a copy of it.

Run:  .venv/bin/python bench/chain1m.py --db tc_bench1m                    (build: about 1,000,000 decisions)
      .venv/bin/python bench/chain1m.py --db tc_bench1m --reuse --erase    (measure on a copy)

Build: drops and creates `--db`, migrates, and logs `--decisions` decisions of customer `bench1m`
through the service's own batch path in-process (`decisions_log_batch`, 1,000 decisions a call,
the same planning, entries, salts, commitments, Merkle tree nodes, aggregates and events as
POST /log/batch, with no HTTP), so the chain is valid and every table an erasure touches holds
what the service would have written. Celery runs eagerly, so the signed checkpoints (one per
1,000 entries) are made as the chain grows. Decisions: 1,000 reviewers, 5 models, timestamps
spread evenly over the last 89 days, confidence on 90 %, an outcome on 40 %, an initial decision
on 20 %, subgroups and a context on each. Every decision names a subject; every 100th one (index
50, 150, ...) names SUBJECT, so 1 % of the chain (10,000 entries of 1,000,000) is that one
person, spread evenly across it. The data folder (`--data-dir`, with the checkpoint signing key)
must be given to anything that verifies this database's checkpoints (TRUSTCAL_DATA_DIR).

`--reuse --fill`: when a build had to be stopped (on a loaded machine the batch path can fall to
a few hundred decisions a second), the batches it left out are written directly (`fill`): the
same decisions, validated, made into rows and format-2 entries and appended by the service's own
functions, without the planner's contributors; their calibration aggregates are added in SQL
afterwards, their subgroup statistics and events are not written.

`--erase` copies `--db` (CREATE DATABASE ... TEMPLATE, so the built database stays unerased for
the next run) and on the copy times, one after the other: a plain psycopg UPDATE of the rows the
erasure changes (the same WHERE, rolled back), then the service call `audit.erasure.erasure_request`
for SUBJECT (override_minimum: the entries are younger than the retention minimum), then a full
chain verification (the worker's `verify_job_run`). Prints one JSON line last.
"""

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchenv import fresh_stack  # noqa: E402  (bench/ is this script's folder)

CUSTOMER = "bench1m"
SUBJECT = "subject-bench1m"
SUBJECT_EVERY = 100
USERS = 1000
BATCH = 1000
DAYS = 89


def body(i: int, n: int, start: dt.datetime, rnd: random.Random) -> dict:
    """Decision i of n: a reviewer who mostly follows a confident AI."""
    ai = "approve" if rnd.random() < 0.6 else "deny"
    other = "deny" if ai == "approve" else "approve"
    confidence = round(rnd.random(), 3)
    user_decision = ai if rnd.random() < 0.3 + 0.6 * confidence else other
    item = {
        "decision_id": f"c1m-{i}",
        "user_id": f"reviewer-{i % USERS}",
        "subject_id": SUBJECT if i % SUBJECT_EVERY == SUBJECT_EVERY // 2 else f"applicant-{i}",
        "model_id": f"model-{i % 5}",
        "model_version": "1",
        "ai_recommendation": ai,
        "user_decision": user_decision,
        "context": f"case {i}: application file reviewed by the desk",
        "subgroups": {"gender": rnd.choice("fm"), "age_group": rnd.choice(["18-30", "31-50", "51+"])},
        "timestamp": (start + dt.timedelta(seconds=DAYS * 86400 * i / n)).isoformat().replace("+00:00", "Z"),
    }
    if rnd.random() < 0.9:
        item["ai_confidence"] = confidence
    if rnd.random() < 0.4:
        item["outcome"] = ai if rnd.random() < max(confidence, 0.05) else other
    if rnd.random() < 0.2:
        item["initial_decision"] = rnd.choice((ai, other))
    return item


def django_env(db: str, redis_db: str, data_dir: Path) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{db}",
        "REDIS_URL": f"redis://127.0.0.1:6379/{redis_db}",
        "TRUSTCAL_DATA_DIR": str(data_dir),
        "CELERY_TASK_ALWAYS_EAGER": "1",
    }


def django_setup(env: dict[str, str]) -> None:
    os.environ.update(env)
    import django

    django.setup()


def customer_create() -> None:
    from keys.services import api_key_create

    api_key_create(customer_id=CUSTOMER, tier="enterprise")


def build(decisions: int, part: int, parts: int) -> None:
    """This process's share of the batches: every `parts`-th one from `part`."""
    from django.conf import settings
    from django.db import DatabaseError

    from audit.services import decisions_log_batch
    from keys.models import Customer

    settings.RATE_LIMITS_ENABLED = False
    customer = Customer.objects.get(pk=CUSTOMER)
    start = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=DAYS)
    started = time.perf_counter()
    for number, first in enumerate(range(part * BATCH, decisions, parts * BATCH)):
        rnd = random.Random(first)  # each batch's values are the same whichever process logs it
        items = [body(i, decisions, start, rnd) for i in range(first, min(decisions, first + BATCH))]
        for attempt in range(5):  # a deadlock with another builder: the same batch again
            try:
                result = decisions_log_batch(customer=customer, items=items)
                break
            except DatabaseError:
                if attempt == 4:
                    raise
        if result.accepted + result.replayed != len(items):
            errors = [item.error for item in result.items if item.error is not None][:3]
            sys.exit(f"batch at {first}: {result.accepted} of {len(items)} accepted: {errors}")
        if part == 0 and (number + 1) % 50 == 0:
            done = (number + 1) * BATCH * parts
            elapsed = time.perf_counter() - started
            print(f"about {done:,} decisions in {elapsed:.0f} s ({done / elapsed:,.0f}/s)", flush=True)


def build_parallel(args: argparse.Namespace, data_dir: Path) -> dict:
    """`--jobs` processes log the batches at once: one's planning overlaps another's writes
    (the chain head is locked only for each batch's append, last)."""
    customer_create()
    started = time.perf_counter()
    command = [sys.executable, __file__, "--db", args.db, "--redis-db", args.redis_db, "--data-dir",
               str(data_dir), "--decisions", str(args.decisions), "--parts", str(args.jobs)]  # fmt: skip
    workers = [subprocess.Popen([*command, "--part", str(k)]) for k in range(args.jobs)]
    if any(worker.wait() for worker in workers):
        sys.exit("a builder failed")
    return {
        "decisions": args.decisions,
        "jobs": args.jobs,
        "build_seconds": round(time.perf_counter() - started, 1),
    }


def fill(decisions: int) -> dict:
    """The batches the build has not logged, written directly: each decision validated and made
    into its row and its format-2 entry by the service's own functions (audit.inputs,
    audit.records.new_decision, audit.plan.new_entry) and appended by audit.apply.entries_append
    (salts, commitments, links, tree, checkpoints), 1,000 a transaction, without the planner and
    its contributors; their calibration aggregates are then added in SQL (the expressions
    calibration_seed.py checks against the service's rule). Subgroup statistics and events are
    not written for them."""
    from calibration_seed import SUMS
    from django.db import connection, transaction
    from django.utils import timezone

    from audit.apply import entries_append
    from audit.inputs import decision_validated
    from audit.models import AuditEntry, Decision
    from audit.plan import new_entry
    from audit.records import ms, new_decision, payload_fingerprint
    from config.db.bulk import bulk_insert
    from keys.models import Customer

    customer = Customer.objects.get(pk=CUSTOMER)
    done = set(Decision.objects.filter(customer=customer).values_list("decision_id", flat=True))
    start = (
        Decision.objects.filter(customer=customer)
        .order_by("timestamp")
        .values_list("timestamp", flat=True)[0]
    )
    first_pk = (Decision.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    new_id = AuditEntry._meta.get_field("id").get_default
    started, filled = time.perf_counter(), 0
    for first in range(0, decisions, BATCH):
        if f"c1m-{first}" in done:
            continue
        rnd = random.Random(first)
        items = [
            decision_validated(body(i, decisions, start, rnd))
            for i in range(first, min(decisions, first + BATCH))
        ]
        now = ms(timezone.now())
        with transaction.atomic():
            rows = [
                new_decision(customer=customer, data=d, fingerprint=payload_fingerprint(d), now=now)
                for d in items
            ]
            bulk_insert(Decision, rows, with_ids=True)
            entries = [new_entry(customer_id=CUSTOMER, decision=r, type="decision", logged_at=now, entry_id=new_id())
                       for r in rows]  # fmt: skip
            entries_append(CUSTOMER, entries, decisions=len(rows))
        filled += len(rows)
        if filled % 50_000 == 0:
            print(f"filled {filled:,} in {time.perf_counter() - started:.0f} s", flush=True)
    seconds = time.perf_counter() - started
    cols = ", ".join(SUMS)
    updates = ", ".join(f"{n} = calibration_userdailyaggregate.{n} + excluded.{n}" for n in SUMS)
    with connection.cursor() as cursor:
        for key in ("'*'", "model_id"):
            cursor.execute(
                f"INSERT INTO calibration_userdailyaggregate (customer_id, user_id, model_key, day, {cols}) "
                f"SELECT customer_id, user_id, {key}, (timestamp AT TIME ZONE 'UTC')::date, {', '.join(SUMS.values())} "
                f"FROM audit_decision WHERE customer_id = %s AND id >= %s GROUP BY 1, 2, 3, 4 "
                f"ON CONFLICT (customer_id, user_id, model_key, day) DO UPDATE SET {updates}",
                [CUSTOMER, first_pk],
            )
    return {
        "filled": filled,
        "fill_seconds": round(seconds, 1),
        "fill_aggregates_seconds": round(time.perf_counter() - started - seconds, 1),
    }


def verify() -> dict:
    """A full recheck of the chain, the tree and every signed checkpoint, as the worker runs it."""
    from audit.models import VerifyJob
    from audit.verify import verify_job_run

    job = VerifyJob.objects.create(customer_id=CUSTOMER)
    started = time.perf_counter()
    verify_job_run(job_id=job.pk)
    seconds = time.perf_counter() - started
    job.refresh_from_db()
    result = job.result or {}
    return {
        "verify_seconds": round(seconds, 1),
        "valid": result.get("valid"),
        "entries_checked": result.get("entries_checked"),
        "checkpoints_checked": result.get("checkpoints_checked"),
        "erased_entries": result.get("erased_entries"),
    }


PLAIN_UPDATE = """
UPDATE audit_auditentry SET user_id = NULL, subject_id = NULL, context = NULL, subgroups = NULL,
    salt = NULL, erased = true
WHERE customer_id = %s AND subject_id = %s AND erased = false AND format = 2
    AND type IN ('decision', 'outcome', 'subgroups_attached')
"""


def erase(dsn: str) -> dict:
    """The plain UPDATE (rolled back), then the service's erasure of SUBJECT, on the copy."""
    import psycopg

    from audit.erasure import erasure_request
    from keys.models import Customer

    with psycopg.connect(dsn) as conn:
        started = time.perf_counter()
        rows = conn.execute(PLAIN_UPDATE, (CUSTOMER, SUBJECT)).rowcount
        plain = time.perf_counter() - started
        conn.rollback()
    customer = Customer.objects.get(pk=CUSTOMER)
    started = time.perf_counter()
    result = erasure_request(
        customer=customer,
        target="subject_id",
        value=SUBJECT,
        reason="bench/chain1m.py: one subject's erasure",
        legal_basis="gdpr_art_17_1_a",
        override_minimum=True,
    )
    seconds = time.perf_counter() - started
    return {
        "plain_update_rows": rows,
        "plain_update_seconds": round(plain, 3),
        "erasure_entries": result.erasure.entries,
        "erasure_status": result.erasure.status,
        "erasure_seconds": round(seconds, 2),
        "ratio": round(seconds / plain, 1) if plain else None,
    }


def copy_database(source: str, target: str) -> float:
    started = time.perf_counter()
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-qc"]
    subprocess.run([*psql, f"DROP DATABASE IF EXISTS {target}"], check=True)
    subprocess.run([*psql, f"CREATE DATABASE {target} TEMPLATE {source}"], check=True)
    return time.perf_counter() - started


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="tc_bench1m")
    parser.add_argument("--redis-db", default="9")
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--data-dir", type=Path, default=None, help="default /tmp/<db>-data")
    parser.add_argument("--reuse", action="store_true", help="keep the built database (no build)")
    parser.add_argument("--verify", action="store_true", help="time a full verification of --db")
    parser.add_argument("--erase", action="store_true", help="time the erasure on a copy of --db")
    parser.add_argument("--jobs", type=int, default=2, help="builder processes")
    parser.add_argument("--fill", action="store_true", help="write the batches a stopped build left out")
    parser.add_argument("--part", type=int, default=None, help=argparse.SUPPRESS)  # one builder's share
    parser.add_argument("--parts", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part is not None:
        django_setup(django_env(args.db, args.redis_db, args.data_dir))
        build(args.decisions, args.part, args.parts)
        return
    data_dir = args.data_dir or Path(f"/tmp/{args.db}-data")
    data_dir.mkdir(parents=True, exist_ok=True)
    out: dict = {"db": args.db, "data_dir": str(data_dir), "load_average_start": load_average()}
    db = args.db
    if not args.reuse:
        fresh_stack(db=db, redis_db=args.redis_db, data_dir=data_dir)
    if args.erase:
        db = f"{args.db}_erase"
        out["copy_seconds"] = round(copy_database(args.db, db), 1)
    django_setup(django_env(db, args.redis_db, data_dir))
    if not args.reuse:
        out.update(build_parallel(args, data_dir))
    if args.fill:
        out.update(fill(args.decisions))
    if args.erase:
        out.update(erase(f"postgresql://postgres@127.0.0.1:5432/{db}"))
        print(json.dumps(out), flush=True)  # before the verification, which takes minutes
    if args.verify or args.erase:
        out.update(verify())
    out["load_average_end"] = load_average()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
