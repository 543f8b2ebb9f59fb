"""The Merkle tree and signed checkpoints of the audit trail at scale (PostgreSQL):
what the tree adds to POST /log and to a 1,000-item batch, inclusion and consistency proof
latency, the NDJSON export against a plain COPY of the same rows in the same run, GET
/audit-trail/verify's checkpoint check, and the offline verifier on the whole export.

    createdb -h 127.0.0.1 -U postgres tc_checkpoints_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tc_checkpoints_bench \\
        .venv/bin/python bench/checkpoints_bench.py --entries 1000000

Phases (`--phase`, default all, in this order; seeding is skipped when the customer already
holds the entries):
- seed: the first `--through-service` entries (default 50,000) through the POST /log/batch
  service, 1,000 per batch, the tree hook (audit.checkpoints.chain_extended: reading the
  subtrees it merges, hashing, inserting the nodes, signing a checkpoint every 1,000) timed
  inside each batch; the rest written directly (bulk rows, the tree extended by the
  service's own audit.tree.tree_append), since the later phases need rows, not the batch path.
- proofs: 1,000 random inclusion and 1,000 random consistency proofs through the Django test
  client (the whole view stack, no network), p50/p99.
- export: GET /audit-trail/export streamed to a file in a fresh process (its peak RSS is its
  own), and the plain `COPY (SELECT the entry columns ... ORDER BY sequence) TO STDOUT` of the
  same rows into /dev/null in a fresh process, in the same run.
- offline: `python -m audit.offline_verify` on that export with the latest checkpoint.
- verify: GET /audit-trail/verify once cold (chain and every checkpoint).
- log: POST /log and 1,000-item batches on the big chain, the tree hook timed inside each
  request: what the tree adds to a request.
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CUSTOMER = "bench-tree"
OUT = Path(tempfile.gettempdir()) / "trustcal-checkpoints-bench"


def _django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("TRUSTCAL_DATA_DIR", str(OUT / "data"))
    # Thousands of calls of one key in a minute: the tier limit is not what is measured.
    os.environ.setdefault("TRUSTCAL_RATE_LIMITS_ENABLED", "false")
    import django

    django.setup()


def _decision(i: int, n: int, rnd: random.Random) -> dict:
    from export_bench import _decision as shaped

    return shaped(i, n, rnd)


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def seed(n: int, through_service: int) -> dict:
    """The first `through_service` entries through the POST /log/batch service (the tree hook
    timed inside each batch); the rest written directly (decision rows and chained entries
    by bulk insert, as the batch path's last step does, no calibration or bias aggregates)
    and the tree extended with the service's own audit.tree.tree_append, 10,000 at a time:
    the proofs, the export and the offline verifier need the rows, not the batch path."""
    from django.db import transaction
    from django.utils import timezone

    from audit import apply, checkpoints, tree
    from audit import services as audit_services
    from audit.models import AuditEntry, ChainHead, Decision
    from audit.plan import new_entry
    from audit.records import new_decision, payload_fingerprint
    from config.db.bulk import bulk_insert
    from config.timeutils import parse_timestamp
    from keys.models import Customer

    customer, _ = Customer.objects.get_or_create(id=CUSTOMER)
    have = ChainHead.objects.filter(customer=customer).values_list("sequence", flat=True).first() or 0
    if have >= n:
        return {"phase": "seed", "skipped": f"{have} entries already there"}
    if have:
        raise SystemExit(f"{CUSTOMER} holds {have} entries, not {n}: use a fresh database")
    hook_seconds: list[float] = []
    real = checkpoints.chain_extended

    def timed(**kwargs):
        t0 = time.perf_counter()
        real(**kwargs)
        hook_seconds.append(time.perf_counter() - t0)

    apply.chain_extended = timed
    rnd = random.Random(7)
    batch_seconds: list[float] = []
    started = time.perf_counter()
    try:
        for offset in range(0, min(n, through_service), 1000):
            items = [_decision(i, n, rnd) for i in range(offset, min(n, offset + 1000))]
            t0 = time.perf_counter()
            audit_services.decisions_log_batch(customer=customer, items=items)
            batch_seconds.append(time.perf_counter() - t0)
    finally:
        apply.chain_extended = real
    service_seconds = time.perf_counter() - started
    shares = [h / (b - h) for h, b in zip(hook_seconds, batch_seconds, strict=True)]
    started = time.perf_counter()
    tree_seconds = 0.0
    for offset in range(min(n, through_service), n, 10_000):
        now = timezone.now()
        decisions = []
        for i in range(offset, min(n, offset + 10_000)):
            data = _decision(i, n, rnd)
            data["timestamp"] = parse_timestamp(data["timestamp"])
            decisions.append(
                new_decision(customer=customer, data=data, fingerprint=payload_fingerprint(data), now=now)
            )
        with transaction.atomic():
            bulk_insert(Decision, decisions, with_ids=True)
            entries = [
                new_entry(customer_id=CUSTOMER, decision=d, type=AuditEntry.Type.DECISION, logged_at=now,
                                 entry_id=AuditEntry._meta.get_field("id").get_default())
                for d in decisions
            ]  # fmt: skip
            apply.chain_extended = lambda **kwargs: None
            try:
                apply.entries_append(CUSTOMER, entries, decisions=len(entries))
            finally:
                apply.chain_extended = real
            t0 = time.perf_counter()
            tree.tree_append(CUSTOMER, offset, [e.hash for e in entries])
            tree_seconds += time.perf_counter() - t0
        if offset % 100_000 == 0:
            print(f"seeded {offset}", file=sys.stderr, flush=True)
    checkpoints.checkpoint_make(customer=customer)  # the newest checkpoint covers every entry
    return {
        "phase": "seed",
        "entries": n,
        "through_service": min(n, through_service),
        "service_seconds": round(service_seconds, 1),
        "bulk_seconds": round(time.perf_counter() - started, 1),
        "bulk_tree_append_seconds": round(tree_seconds, 1),
        "batch_ms_p50": round(statistics.median(batch_seconds) * 1000, 1),
        "tree_hook_ms_p50": round(statistics.median(hook_seconds) * 1000, 2),
        "tree_hook_ms_p99": round(_pct(hook_seconds, 99) * 1000, 2),
        "tree_share_of_batch_p50_pct": round(statistics.median(shares) * 100, 2),
        "tree_share_total_pct": round(sum(hook_seconds) / (sum(batch_seconds) - sum(hook_seconds)) * 100, 2),
    }


def _client():
    from rest_framework.test import APIClient

    from keys.services import api_key_create

    client = APIClient()
    key = api_key_create(customer_id=CUSTOMER, tier="enterprise").value
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def proofs(count: int = 1000) -> dict:
    from audit.models import ChainHead

    client = _client()
    size = ChainHead.objects.get(customer_id=CUSTOMER).sequence
    rnd = random.Random(11)
    out: dict = {"phase": "proofs", "tree_size": size}
    for kind in ("inclusion", "consistency"):
        times = []
        for _ in range(count):
            if kind == "inclusion":
                n = rnd.randint(1, size)
                url = f"/v1/audit-trail/proofs/inclusion?sequence={rnd.randint(1, n)}&tree_size={n}"
            else:
                second = rnd.randint(1, size)
                url = f"/v1/audit-trail/proofs/consistency?first={rnd.randint(1, second)}&second={second}"
            t0 = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - t0)
            assert response.status_code == 200, response.content
        out[f"{kind}_ms_p50"] = round(statistics.median(times) * 1000, 2)
        out[f"{kind}_ms_p99"] = round(_pct(times, 99) * 1000, 2)
    # Where the time goes: the tree reads alone, and the same stack's floor (an authenticated
    # GET answered by one indexed read) in the same minutes.
    from audit import tree

    for kind in ("inclusion", "consistency"):
        times = []
        for _ in range(count):
            second = rnd.randint(1, size)
            first = rnd.randint(1, second)
            t0 = time.perf_counter()
            if kind == "inclusion":
                tree.inclusion(CUSTOMER, first - 1, second)
            else:
                tree.consistency_proof(CUSTOMER, first, second)
            times.append(time.perf_counter() - t0)
        out[f"{kind}_tree_read_ms_p50"] = round(statistics.median(times) * 1000, 2)
        out[f"{kind}_tree_read_ms_p99"] = round(_pct(times, 99) * 1000, 2)
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        assert client.get("/v1/audit-trail/checkpoints/latest").status_code == 200
        times.append(time.perf_counter() - t0)
    out["floor_checkpoints_latest_ms_p50"] = round(statistics.median(times) * 1000, 2)
    out["floor_checkpoints_latest_ms_p99"] = round(_pct(times, 99) * 1000, 2)
    return out


def export_child() -> dict:
    """In a fresh process: the export streamed to OUT/export.ndjson."""
    client = _client()
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    size = 0
    with open(OUT / "export.ndjson", "wb") as handle:
        for chunk in client.get("/v1/audit-trail/export").streaming_content:
            handle.write(chunk)
            size += len(chunk)
    return {
        "what": "export",
        "seconds": round(time.perf_counter() - t0, 2),
        "bytes": size,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "baseline_rss_mib": round(baseline, 1),
    }


def copy_child() -> dict:
    """In a fresh process: the plain COPY of the same rows and columns, into /dev/null."""
    import psycopg

    from audit.chain import ENTRY_COLUMNS

    columns = ", ".join("id" if c == "id" else c for c in ENTRY_COLUMNS)
    dsn = os.environ["DATABASE_URL"].replace("postgres://", "postgresql://")
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    size = 0
    with psycopg.connect(dsn) as conn, conn.cursor() as cur, open(os.devnull, "wb") as sink:
        sql = (
            f"COPY (SELECT {columns} FROM audit_auditentry WHERE customer_id = '{CUSTOMER}' "  # noqa: S608
            "ORDER BY sequence) TO STDOUT"
        )
        with cur.copy(sql) as copy:
            for data in copy:
                sink.write(data)
                size += len(data)
    return {
        "what": "plain COPY",
        "seconds": round(time.perf_counter() - t0, 2),
        "bytes": size,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "baseline_rss_mib": round(baseline, 1),
    }


def _child(phase: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", phase], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def export() -> dict:
    copies = [_child("copy") for _ in range(3)]
    exported = _child("export")
    copy = sorted(copies, key=lambda c: c["seconds"])[1]
    return {
        "phase": "export",
        "export": exported,
        "plain_copy_median_of_3": copy,
        "ratio_time": round(exported["seconds"] / copy["seconds"], 2),
    }


def offline() -> dict:
    client = _client()
    (OUT / "checkpoint.txt").write_bytes(
        client.get("/v1/audit-trail/checkpoints/latest", HTTP_ACCEPT="text/plain").content
    )
    (OUT / "key.json").write_bytes(client.get("/v1/audit-trail/checkpoint-key").content)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "audit.offline_verify",
            "--key",
            str(OUT / "key.json"),
            "--checkpoint",
            str(OUT / "checkpoint.txt"),
            str(OUT / "export.ndjson"),
        ],
        cwd=ROOT,
        env={"PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    usage = after.ru_maxrss / 1024
    return {
        "phase": "offline",
        "seconds": round(seconds, 2),
        "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        "exit": done.returncode,
        "output": done.stdout.strip().splitlines()[:3],
        "children_peak_rss_mib": round(usage, 1),
    }


def verify() -> dict:
    from audit import verify as audit_verify
    from audit.models import ChainCheckpoint
    from keys.models import Customer

    customer = Customer.objects.get(pk=CUSTOMER)
    ChainCheckpoint.objects.filter(customer=customer).delete()
    t0 = time.perf_counter()
    result, _ = audit_verify.chain_verify_incremental(customer)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm, _ = audit_verify.chain_verify_incremental(customer)
    return {
        "phase": "verify",
        "cold_seconds": round(cold, 2),
        "again_seconds (incremental)": round(time.perf_counter() - t0, 2),
        "valid": result.valid and warm.valid,
        "entries": result.entries_checked,
        "checkpoints_checked": result.checkpoints_checked,
    }


def log_ab(rounds: int, per_block: int) -> dict:
    """POST /log one at a time and 1,000-item batches on the big chain, with the tree hook
    (audit.checkpoints.chain_extended) timed inside each request: its share of the request
    is the cost the tree adds. (An A/B against another customer's chain with the hook
    switched off mixed the chain's size into the figure.)"""
    from audit import apply, checkpoints

    client = _client()
    rnd = random.Random(3)
    counter = iter(range(10_000_000, 20_000_000))
    run = uuid.uuid4().hex[:8]

    def fresh() -> dict:
        """A new decision every time (an id seen before would be a replay, which writes nothing)."""
        i = next(counter)
        return {**_decision(i, 20_000_000, rnd), "decision_id": f"log-{run}-{i}"}

    real = checkpoints.chain_extended
    hooks: list[float] = []

    def timed(**kwargs):
        t0 = time.perf_counter()
        real(**kwargs)
        hooks.append(time.perf_counter() - t0)

    out: dict = {"phase": "log", "rounds": rounds, "per_block": per_block}
    apply.chain_extended = timed
    try:
        for kind in ("log", "batch"):
            requests: list[float] = []
            hooks.clear()
            for _ in range(rounds):
                count = per_block if kind == "log" else 1
                for _ in range(count):
                    if kind == "log":
                        url, body = "/v1/log", fresh()
                    else:
                        url, body = "/v1/log/batch", {"decisions": [fresh() for _ in range(1000)]}
                    t0 = time.perf_counter()
                    response = client.post(url, body, format="json")
                    requests.append(time.perf_counter() - t0)
                    assert response.status_code in (200, 201), response.content
                    assert kind == "batch" or response.status_code == 201
            out[f"{kind}_requests"] = len(requests)
            out[f"{kind}_tree_hook_calls"] = len(hooks)
            out[f"{kind}_ms_p50"] = round(statistics.median(requests) * 1000, 2)
            out[f"{kind}_tree_hook_ms_p50"] = round(statistics.median(hooks) * 1000, 2)
            out[f"{kind}_tree_hook_ms_p99"] = round(_pct(hooks, 99) * 1000, 2)
            out[f"{kind}_tree_added_pct"] = round(sum(hooks) / (sum(requests) - sum(hooks)) * 100, 2)
    finally:
        apply.chain_extended = real
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--phase", default="all")
    parser.add_argument("--through-service", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-block", type=int, default=200)
    parser.add_argument("--child")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).parent))
    _django()
    if args.child:
        print(json.dumps(export_child() if args.child == "export" else copy_child()))
        return
    phases = {
        "seed": lambda: seed(args.entries, args.through_service),
        "proofs": proofs,
        "export": export,
        "offline": offline,
        "verify": verify,
        "log": lambda: log_ab(args.rounds, args.per_block),
    }
    wanted = list(phases) if args.phase == "all" else args.phase.split(",")
    for name in wanted:
        result = phases[name]()
        result["load_average"] = os.getloadavg()
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
