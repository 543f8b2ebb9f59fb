"""Where a 1,000-item POST /log/batch's wall time goes, step by step: bench/log_cpu.py's batches
in-process (PostgreSQL + Redis), each step of the request timed by its wall time
(time.perf_counter) and this process's CPU time (time.process_time), medians over the batches
after the first. A step whose wall time is well over its CPU time is waiting on the server (or
on the machine's other work: compare with the steps that never wait, the parse, validation and
planning, to see how loaded the machine was).

Run:  DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> REDIS_URL=redis://127.0.0.1:6379/<n> \\
      .venv/bin/python bench/batch_timeline.py [--root DIR] [--requests 12] [--batch 1000]
(the database must be migrated, as for log_cpu.py; --root measures another checkout with this
venv; a step that checkout does not have is left out.)"""

import argparse
import functools
import importlib
import runpy
import statistics
import sys
import time
from collections.abc import Callable

from benchenv import ROOT, checkout_root

MEASURED = checkout_root()

# (module, attribute, shown as), in the order a batch runs them; a method as "Class.method".
STEPS = [
    ("rest_framework.test", "APIClient.post", "the request (test client)"),
    ("config.parsers", "LargeJSONParser.parse", "  the body's parse"),
    ("audit.services", "items_validated", "  validation"),
    ("audit.pipeline", "_contributors_load", "  the contributors' loads"),
    ("audit.pipeline", "stored_load", "  the stored decisions' read"),
    ("audit.pipeline", "plan_items", "  planning"),
    ("audit.plan", "payload_fingerprint", "    the fingerprints (canonical JSON, SHA-256)"),
    ("audit.plan", "new_decision", "    the decision rows"),
    ("audit.plan", "new_entry", "    the entry rows"),
    ("calibration.contributions", "CalibrationContributor.add", "    calibration's changes"),
    ("bias.contributions", "BiasContributor.add", "    the statistics' changes"),
    ("audit.pipeline", "plan_apply", "  applying (to the chain's end)"),
    ("audit.apply", "bulk_insert", "    the decisions' COPY (before 2026-11-30), the entries'"),
    ("audit.apply", "insert_sent", "    the decisions' insert, sent in the pipeline"),
    ("calibration.contributions", "CalibrationContributor.apply", "    calibration's staging and upsert"),
    ("calibration.setwise", "staged_rows", "      its staging rows (Python)"),
    ("bias.contributions", "BiasContributor.apply", "    the statistics' staging and upsert"),
    ("bias.setwise", "_rows", "      their staging rows (Python)"),
    ("audit.apply", "events_emit", "    the events' COPY (before 2026-11-30)"),
    ("audit.apply", "events_emit_sent", "    the events' insert, sent in the pipeline"),
    ("audit.apply", "entries_append", "    the chain: head, link, COPY, tree"),
    ("audit.plan", "entries_seal", "      sealing (clear fields, commitment, canonical text)"),
    ("audit.chain", "canonical_hash", "      linking's SHA-256"),
    ("audit.apply", "chain_extended", "      the tree"),
    ("django.db.backends.base.base", "BaseDatabaseWrapper._commit", "  COMMIT (deferred key checks)"),
    ("django.db.backends.base.base", "BaseDatabaseWrapper.run_and_clear_commit_hooks", "  on-commit hooks"),
    ("audit.views", "batch_payload", "  the response document"),
]


class _Timeline:
    """The steps' times by batch: each call's (wall, cpu) by its label, in call order."""

    def __init__(self) -> None:
        self.batches: list[dict[str, list[tuple[float, float]]]] = []
        self.inside = False

    def timed[**P, R](self, fn: Callable[P, R], label: str, *, request: bool = False) -> Callable[P, R]:
        @functools.wraps(fn)
        def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            is_batch = request and str(args[1] if len(args) > 1 else kwargs.get("path")).endswith("/batch")
            if is_batch:
                self.batches.append({})
                self.inside = True
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                if self.inside:
                    took = (time.perf_counter() - wall, time.process_time() - cpu)
                    self.batches[-1].setdefault(label, []).append(took)
                if is_batch:
                    self.inside = False

        return timed


def _wrap_steps(timeline: _Timeline) -> list[str]:
    shown = []
    for module_name, attribute, label in STEPS:
        owner: object = importlib.import_module(module_name)
        *outer, name = attribute.split(".")
        for part in outer:
            owner = getattr(owner, part)
        if not hasattr(owner, name):
            continue  # a checkout without this step
        setattr(owner, name, timeline.timed(getattr(owner, name), label, request=not shown))
        shown.append(label)
    return shown


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", help="the checkout to measure (default: this one)")
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()

    import django

    django.setup()
    timeline = _Timeline()
    shown = _wrap_steps(timeline)
    sys.argv = ["log_cpu.py", "--requests", str(args.requests), "--batch", str(args.batch)]
    if args.root:
        sys.argv += ["--root", args.root]
    runpy.run_path(str(ROOT / "bench" / "log_cpu.py"), run_name="__main__")
    measured = timeline.batches[1:]  # the first batch warms what 50 single requests did not
    print(f"median of {len(measured)} batches (ms)                       wall    cpu   ({MEASURED})")
    for label in shown:
        calls = max(len(batch.get(label, [])) for batch in measured)
        if calls > 2:  # a step per item or per entry: its calls summed per batch
            wall = statistics.median(sum(t[0] for t in batch.get(label, [])) for batch in measured) * 1000
            cpu = statistics.median(sum(t[1] for t in batch.get(label, [])) for batch in measured) * 1000
            print(f"{label + f' ({calls} calls)':58s} {wall:7.1f} {cpu:6.1f}")
            continue
        for call in range(calls):
            times = [batch[label][call] for batch in measured if len(batch.get(label, [])) > call]
            wall = statistics.median(t[0] for t in times) * 1000
            cpu = statistics.median(t[1] for t in times) * 1000
            shown_as = label if calls == 1 else f"{label} ({call + 1})"
            print(f"{shown_as:58s} {wall:7.1f} {cpu:6.1f}")


if __name__ == "__main__":
    main()
