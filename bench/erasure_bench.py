"""The cost of the personal-field commitment on POST /log (docs/reference/erasure.md, "Entry
format 2"): in-process CPU time per decision logged through the service's own path (Django's
test client, POST /log, one customer, one thread, PostgreSQL + Redis), with the commitment as it
is against the same path with the commitment replaced by a constant (no salt drawn, no JCS of
the personal fields, no HMAC), in alternating rounds of the same run so that the machine's noise
falls on both; and the commitment alone (salt, JCS, HMAC of a typical decision's personal
fields) timed beside it. CPU is this process's (time.process_time): PostgreSQL's own work, the
same for both but for the 32-byte salt column, is not in it.

Run:  .venv/bin/python bench/erasure_bench.py [--requests 250] [--rounds 20] [--db tc_erasure_bench]
(drops and creates `--db`, migrates it, flushes Redis db `--redis-db`). Prints one JSON line last.

The erasure of 10,000 entries of a 1,000,000-entry chain, beside a plain psycopg UPDATE of the
same rows in the same run, is bench/chain1m.py --reuse --erase (bench/README.md).
"""

import argparse
import json
import os
import random
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchenv import fresh_stack


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def body(i: int, tag: str, rnd: random.Random) -> dict:
    """A decision with every personal field (what a bank logs)."""
    ai = rnd.choice(("approve", "deny"))
    return {
        "decision_id": f"era-{tag}-{i}",
        "user_id": f"reviewer-{i % 200}",
        "subject_id": f"applicant-{i}",
        "model_id": f"model-{i % 5}",
        "model_version": "1",
        "ai_recommendation": ai,
        "ai_confidence": round(rnd.random(), 3),
        "user_decision": ai if rnd.random() < 0.75 else "other",
        "context": f"loan application {i}, amount {1000 + i % 9000} EUR",
        "subgroups": {"gender": rnd.choice("fm"), "age_group": rnd.choice(["18-30", "31-50", "51+"])},
    }


class Without:
    """The commitment replaced by a constant for the duration of a round: entry_seal then
    renders, hashes and stores the entry as usual, with `personal` a fixed 64-hex text."""

    def __enter__(self) -> None:
        from audit import chain

        self.chain, self.saved = chain, (chain.commitment, chain.os)
        chain.commitment = lambda salt, personal: "0" * 64
        chain.os = types.SimpleNamespace(urandom=lambda n: bytes(n))  # chain.py's only use of os

    def __exit__(self, *exc: object) -> None:
        self.chain.commitment, self.chain.os = self.saved


def commitment_alone(iterations: int, rnd: random.Random) -> float:
    """Microseconds of CPU per decision for the salt, the JCS and the HMAC alone."""
    from audit.hashing import SALT_BYTES, commitment

    fields = []
    for i in range(iterations):
        b = body(i, "alone", rnd)
        fields.append({k: b.get(k) for k in ("context", "subgroups", "subject_id", "user_id")})
    started = time.process_time()
    for personal in fields:
        commitment(os.urandom(SALT_BYTES), personal)
    return (time.process_time() - started) / iterations * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=250, help="POST /log calls per round")
    parser.add_argument("--rounds", type=int, default=20, help="alternating rounds, half of each kind")
    parser.add_argument("--db", default="tc_erasure_bench")
    parser.add_argument("--redis-db", default="3")
    parser.add_argument("--data-dir", default="/tmp/tc_erasure_bench-data")
    args = parser.parse_args()
    out: dict = {"load_average_start": load_average()}
    Path(args.data_dir).mkdir(parents=True, exist_ok=True)
    os.environ.update(fresh_stack(db=args.db, redis_db=args.redis_db, data_dir=args.data_dir))
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"

    import django

    django.setup()
    from django.conf import settings
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    from keys.services import api_key_create

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    settings.RATE_LIMITS_ENABLED = False
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION=f"Bearer {api_key_create(customer_id='era-bench', tier='enterprise').value}"
    )
    rnd = random.Random(1)
    for i in range(100):  # warm-up: connections, prepared statements, imports
        assert client.post("/v1/log", body(i, "warm", rnd), format="json").status_code == 201
    rounds: dict[str, list[float]] = {"with": [], "without": []}
    for r in range(args.rounds):
        kind = "with" if r % 2 == 0 else "without"
        bodies = [body(i, f"r{r}", rnd) for i in range(args.requests)]
        guard = Without() if kind == "without" else None
        if guard:
            guard.__enter__()
        try:
            started = time.process_time()
            for b in bodies:
                response = client.post("/v1/log", b, format="json")
                assert response.status_code == 201, response.content
            rounds[kind].append((time.process_time() - started) / args.requests * 1000)
        finally:
            if guard:
                guard.__exit__()
    with_ms, without_ms = statistics.median(rounds["with"]), statistics.median(rounds["without"])
    # Each round against the next of the other kind: the machine's drift falls on both.
    paired = [a - b for a, b in zip(rounds["with"], rounds["without"], strict=False)]
    spread = statistics.stdev(paired) / len(paired) ** 0.5 if len(paired) > 1 else None
    alone_us = commitment_alone(20_000, rnd)
    out.update(
        {
            "requests_per_round": args.requests,
            "cpu_ms_per_decision_with": [round(x, 3) for x in rounds["with"]],
            "cpu_ms_per_decision_without": [round(x, 3) for x in rounds["without"]],
            "median_with_ms": round(with_ms, 3),
            "median_without_ms": round(without_ms, 3),
            "commitment_share_of_post_log": round((with_ms - without_ms) / with_ms, 4),
            "paired_difference_ms": round(statistics.mean(paired), 4),
            "paired_difference_stderr_ms": None if spread is None else round(spread, 4),
            "commitment_alone_us": round(alone_us, 2),
            "commitment_alone_share": round(alone_us / 1000 / with_ms, 4),
            "load_average_end": load_average(),
        }
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
