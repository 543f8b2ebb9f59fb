"""Validation cost of request bodies, the declared layer (config.bodies) against the pydantic
models (config.bodymodels), in one process, interleaved: 1,000 bodies per round, the best of
`--rounds` rounds each, CPU time per body. Bodies are the key-create body (moved to a model;
its old declaration is rebuilt here for the comparison) and, for the decision path, the
declared POST /log validator alone (not moved yet). No database is touched.

Run:  .venv/bin/python bench/bodies_bench.py [--rounds 7]"""

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django

django.setup()

from audit.inputs import item_validated  # noqa: E402
from config.bodies import Body, Field, parse  # noqa: E402
from config.bodymodels import body_parse  # noqa: E402
from keys.inputs import DESCRIPTION_MAX, ApiKeyCreateInput  # noqa: E402
from keys.models import CUSTOMER_ID_HELP, CUSTOMER_ID_PATTERN, Tier  # noqa: E402

# The key-create body as config.bodies declared it before it moved to keys.inputs.
OLD_KEY_CREATE = Body(
    "OldApiKeyCreateInput",
    (
        Field(
            "customer_id",
            required=True,
            max_length=64,
            pattern=CUSTOMER_ID_PATTERN.removeprefix("^").removesuffix("$"),
            pattern_help=CUSTOMER_ID_HELP,
        ),
        Field("tier", "choice", required=True, choices=tuple(Tier.values)),
        Field("description", max_length=DESCRIPTION_MAX, allow_blank=True, default=""),
        Field("is_admin", "bool", default=False),
    ),
)


def _best(function: Callable[[Any], object], bodies: list[Any], rounds: list[float]) -> None:
    started = time.process_time()
    for body in bodies:
        function(body)
    rounds.append((time.process_time() - started) / len(bodies))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--items", type=int, default=1000)
    args = parser.parse_args()
    keys = [
        {"customer_id": f"cust-{i}", "tier": "growth", "description": f"key {i}", "is_admin": i % 2 == 0}
        for i in range(args.items)
    ]
    decisions = [
        {
            "decision_id": f"d-{i}",
            "user_id": f"u{i % 50}",
            "model_id": "credit-v1",
            "model_version": "1.0",
            "ai_recommendation": "approve",
            "ai_confidence": 0.7,
            "user_decision": "deny" if i % 3 else "approve",
            "context": "loan application",
            "subgroups": {"gender": "f", "age_group": "30-40"},
            "timestamp": "2026-11-20T09:00:00Z",
        }
        for i in range(args.items)
    ]
    old: list[float] = []
    new: list[float] = []
    decision: list[float] = []
    for _ in range(args.rounds):  # interleaved, so load changes hit both alike
        _best(lambda body: parse(OLD_KEY_CREATE, body), keys, old)
        _best(lambda body: body_parse(ApiKeyCreateInput, body), keys, new)
        _best(item_validated, decisions, decision)
    result = {
        "items_per_round": args.items,
        "rounds": args.rounds,
        "key_create_declared_us": round(min(old) * 1e6, 2),
        "key_create_pydantic_us": round(min(new) * 1e6, 2),
        "key_create_ratio_pydantic_to_declared": round(min(new) / min(old), 3),
        "decision_declared_us": round(min(decision) * 1e6, 2),
        "load_average_1min": os.getloadavg()[0],
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
