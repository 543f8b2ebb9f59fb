"""Validation cost of request bodies (config.bodymodels): a 1,000-item POST /log/batch body
validated as the request does it (the envelope, audit.views.batch_items, then every item alone,
audit.services.items_validated), and one POST /log body (audit.inputs.item_validated). CPU
time, the best of `--rounds` rounds each, interleaved, in one process; no database is touched.
Both batches run with the collector paused, as the batch view runs (config.gcpause), and both
keep the 1,000 models they made, as a batch must.

The plain-tool limit, measured in the same rounds: the same 1,000 decisions through a bare
pydantic model of the fields they hold with pydantic's own constraints (strict, from the JSON
text: no messages of ours, no null-as-absent, no rules over several fields, no timestamp read
as UTC): what the library costs at the least. `ratio_to_plain` is the service's batch over that;
`ratio_median` the same of the medians.

Run:  .venv/bin/python bench/bodies_bench.py [--rounds 15]"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import datetime as dt
from typing import Annotated

import django
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

django.setup()

from audit.inputs import item_validated  # noqa: E402
from audit.services import items_validated  # noqa: E402
from audit.views import batch_items  # noqa: E402
from config.gcpause import collector_paused  # noqa: E402

Text128 = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Text256 = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Text1000 = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


class PlainSubgroups(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    gender: Text256 | None = None
    age_group: Text256 | None = None
    ethnicity: Text256 | None = None


class PlainDecision(BaseModel):
    """The decision's fields with pydantic's own constraints only (strict, like the service)."""

    model_config = ConfigDict(strict=True)
    decision_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._:-]{1,128}$")] | None = None
    user_id: Text256
    model_id: Text256 | None = None
    model_version: Text128 | None = None
    ai_recommendation: Text1000
    ai_confidence: Annotated[float, Field(ge=0, le=1)] | None = None
    user_decision: Text1000
    context: Annotated[str, StringConstraints(max_length=10_000)] = ""
    subgroups: PlainSubgroups | None = None
    timestamp: dt.datetime | None = None


def decision(i: int) -> dict[str, object]:
    return {
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--items", type=int, default=1000)
    args = parser.parse_args()
    batch = {"decisions": [decision(i) for i in range(args.items)]}
    batches: list[float] = []
    singles: list[float] = []
    plain: list[float] = []
    for _ in range(args.rounds):  # interleaved, so load changes hit both alike
        with collector_paused():
            started = time.process_time()
            validated = items_validated(batch_items(batch))
            batches.append(time.process_time() - started)
        assert not [v for v in validated if isinstance(v, Exception)]
        started = time.process_time()
        for body in batch["decisions"]:
            item_validated(body)
        singles.append((time.process_time() - started) / args.items)
        texts = [json.dumps(body) for body in batch["decisions"]]
        with collector_paused():
            started = time.process_time()
            models = [PlainDecision.model_validate_json(text) for text in texts]
            plain.append(time.process_time() - started)
        del validated, models
    result = {
        "items": args.items,
        "rounds": args.rounds,
        "batch_ms_best": round(min(batches) * 1e3, 2),
        "batch_ms_median": round(sorted(batches)[len(batches) // 2] * 1e3, 2),
        "log_body_us_best": round(min(singles) * 1e6, 2),
        "plain_pydantic_batch_ms_best": round(min(plain) * 1e3, 2),
        "plain_pydantic_batch_ms_median": round(sorted(plain)[len(plain) // 2] * 1e3, 2),
        "ratio_to_plain": round(min(batches) / min(plain), 2),
        "ratio_median": round(sorted(batches)[len(batches) // 2] / sorted(plain)[len(plain) // 2], 2),
        "load_average_1min": os.getloadavg()[0],
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
