"""Helpers shared by the perf scripts: the decision table shape, percentiles, output."""

import json
import math
import os
import resource
import threading
from concurrent.futures import ProcessPoolExecutor

# A decision as the service stores it (docs/reference/decisions.md) (17 columns besides the key, two jsonb).
DECISION_COLUMNS = """
    id bigserial PRIMARY KEY,
    customer_id bigint NOT NULL,
    decision_id text NOT NULL,
    user_id text NOT NULL,
    model_id text,
    model_version text,
    ai_recommendation text NOT NULL,
    ai_confidence double precision,
    user_decision text NOT NULL,
    initial_decision text,
    outcome text,
    followed_ai boolean NOT NULL,
    calibration_category text NOT NULL,
    context text NOT NULL DEFAULT '',
    subgroups jsonb NOT NULL DEFAULT '{}',
    metadata jsonb NOT NULL DEFAULT '{}',
    "timestamp" timestamptz NOT NULL,
    logged_at timestamptz NOT NULL,
    UNIQUE (customer_id, decision_id)
"""


def dsn_default():
    return os.environ.get("PERF_DSN") or os.environ.get("DATABASE_URL")


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def latency_summary(latencies_s):
    ms = sorted(v * 1000 for v in latencies_s)
    return {
        q: round(percentile(ms, p), 3) if ms else None
        for q, p in (("p50_ms", 50), ("p99_ms", 99), ("max_ms", 100))
    }


def _run_threads(target, indexes, args):
    latencies, errors = [], []
    threads = [threading.Thread(target=target, args=(i, *args, latencies, errors)) for i in indexes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, len(errors)


def run_workers(target, n, processes, *args):
    """Run target(i, *args, latencies, errors) for i < n in threads spread over processes.

    Deadlines passed in args are time.perf_counter() values: CLOCK_MONOTONIC on Linux,
    so they mean the same in forked children.
    """
    if processes <= 1:
        return _run_threads(target, range(n), args)
    with ProcessPoolExecutor(processes) as pool:
        parts = list(
            pool.map(
                _run_threads,
                [target] * processes,
                [range(p, n, processes) for p in range(processes)],
                [args] * processes,
            )
        )
    return [v for lat, _ in parts for v in lat], sum(err for _, err in parts)


def max_rss_mib():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def emit(result):
    """The one-line JSON result, always the last line on stdout."""
    print(json.dumps(result), flush=True)
