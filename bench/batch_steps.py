"""CPU time of a 1,000-item POST /log/batch's Python steps alone, without a database (the
planning, sealing and row building are pure): the body's parse, validation, planning, sealing
and linking the entries, the decisions' and entries' COPY rows (formatted by psycopg's own
COPY formatter), and the response document. Each step over the same items, min of --rounds
(time.process_time). `--digest` prints one SHA-256 over everything the steps produced with zero
salts and counted ids, to compare two checkouts on the same input (the same bytes).

Run:  .venv/bin/python bench/batch_steps.py [--root DIR] [--items 1000] [--rounds 9] [--digest]
(any DATABASE_URL: no statement is sent.)"""

import argparse
import datetime as dt
import hashlib
import io
import itertools
import json
import random
import time

from benchenv import checkout_root

ROOT = checkout_root()


def bodies(n: int) -> list[dict]:
    """log_cpu.py's mix (two AI answers, a quarter overridden, 200 reviewers, 5 models, two
    subgroup attributes), with an outcome on a third of them and a timestamp on a quarter."""
    rnd = random.Random(1)
    out = []
    for i in range(n):
        ai, other = rnd.choice((("approve", "deny"), ("deny", "approve")))
        body = {"decision_id": f"steps-{i}", "user_id": f"user-{i % 200}", "model_id": f"model-{i % 5}"}
        body.update(model_version="1", ai_recommendation=ai, ai_confidence=round(rnd.random(), 3))
        body.update(user_decision=ai if rnd.random() < 0.75 else other, context="cpu bench")
        body["subgroups"] = {"gender": rnd.choice("fm"), "age_group": rnd.choice(["18-30", "31-50", "51+"])}
        if i % 3 == 0:
            body["outcome"] = other
        if i % 4 == 0:
            body["timestamp"] = "2026-11-20T10:00:00.123456+01:00"
        out.append(body)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--digest", action="store_true")
    args = parser.parse_args()

    import django

    django.setup()
    import psycopg
    from psycopg._copy_base import TextFormatter

    from audit import chain, services
    from audit.models import AuditEntry, Decision
    from audit.plan import Stored, link, plan_items
    from audit.views import batch_payload

    try:  # the write path's database helpers, or an earlier tree's config.bulk
        from config.db import rows as bulk
    except ImportError:
        from config import bulk  # type: ignore[no-redef]
    from config.parsers import LargeJSONParser
    from keys.models import Customer

    customer = Customer(id="steps")
    items_in = bodies(args.items)
    raw = json.dumps({"decisions": items_in}).encode()
    now = dt.datetime(2026, 11, 26, 12, 0, 0, 123000, tzinfo=dt.UTC)
    if args.digest:
        chain.os.urandom = lambda n: bytes(n)  # type: ignore[attr-defined]

    def run() -> tuple[dict[str, float], bytes]:
        times: dict[str, float] = {}
        out = hashlib.sha256()

        def step(name, fn):
            start = time.process_time()
            value = fn()
            times[name] = time.process_time() - start
            return value

        counter = itertools.count()
        body = step("parse", lambda: LargeJSONParser().parse(io.BytesIO(raw)))
        items = body["decisions"]
        validated = step("validate", lambda: services.items_validated(items))
        plan = step(
            "plan",
            lambda: plan_items(
                customer=customer,
                items=validated,
                bodies=items,
                stored=Stored(),
                now=now,
                sources=["log"] * len(items),
                new_entry_id=lambda: f"aud_{next(counter):026d}",
            ),
        )
        for at, decision in enumerate(plan.new_decisions):
            decision.pk = at + 1  # as the applier's COPY gives them keys
        for entry in plan.entries:
            entry.__dict__["decision_id"] = entry._state.fields_cache["decision"].pk
        step("seal+link", lambda: link(plan.entries, sequence=0, head_hash="0" * 64))
        tx = psycopg.adapt.Transformer()

        def copy_rows():
            chunks = []
            for model, objs in ((Decision, plan.new_decisions), (AuditEntry, plan.entries)):
                fields = list(model._meta.concrete_fields)
                if hasattr(bulk, "copy_row_of"):
                    row = bulk.copy_row_of(model, fields)
                else:
                    row = bulk._row_of(fields, bulk._preparers(model))
                formatter = TextFormatter(tx)
                for obj in objs:
                    chunks.append(formatter.write_row(row(obj)))
                chunks.append(formatter.end())
            return b"".join(bytes(c) for c in chunks)

        rows = step("copy rows", copy_rows)
        result = services.BatchResult(plan.results)
        payload = step("response", lambda: json.dumps(batch_payload(result)).encode())
        del rows  # its text depends on how values are formatted for COPY; the values are these:
        for model, objs in ((Decision, plan.new_decisions), (AuditEntry, plan.entries)):
            for obj in objs:
                out.update(repr([getattr(obj, f.attname) for f in model._meta.concrete_fields]).encode())
        out.update(payload)
        for _contributor, acc in plan.contributions:
            out.update(repr(acc).encode())
        out.update(repr(plan.events).encode())
        return times, out.digest()

    import gc

    gc.collect()
    gc.freeze()  # as a web process freezes what it loaded (config/wsgi.py)
    best: dict[str, float] = {}
    digest = b""
    for _ in range(args.rounds):
        gc.disable()  # as the view pauses it (config.gcpause)
        times, digest = run()
        gc.enable()
        gc.collect()
        for name, value in times.items():
            best[name] = min(best.get(name, value), value)
    best["total"] = sum(best.values())
    print(json.dumps({name: round(value * 1000, 2) for name, value in best.items()}))
    if args.digest:
        print("digest", digest.hex())


if __name__ == "__main__":
    main()
