"""Request metrics: counted in-process on the hot path (no I/O), folded into Redis every
few seconds when REDIS_URL is set so that /metrics sees every process and host."""

import threading
import time
from collections import Counter
from typing import Any

from config.redis import get_redis

# Latency histogram bucket upper bounds, milliseconds.
BUCKETS_MS = [
    0.5,
    1,
    2,
    3,
    5,
    7.5,
    10,
    15,
    20,
    30,
    50,
    75,
    100,
    150,
    200,
    300,
    500,
    750,
    1000,
    2000,
    5000,
    10000,
    30000,
]
_REDIS_KEY = "trustcal:metrics:requests"
FLUSH_SECONDS = 5.0

_lock = threading.Lock()
_pending: Counter[str] = Counter()  # not yet folded into Redis
_local: Counter[str] = Counter()  # everything this process saw (used without Redis)
_last_flush = time.monotonic()


def _bucket(duration_ms: float) -> str:
    for bound in BUCKETS_MS:
        if duration_ms <= bound:
            return str(bound)
    return "inf"


def record_request(group: str, status: int, duration_ms: float) -> None:
    fields = ("total", f"status:{status // 100}xx", f"lat:{group}:{_bucket(duration_ms)}")
    global _last_flush
    with _lock:
        for field in fields:
            _pending[field] += 1
            _local[field] += 1
        due = time.monotonic() - _last_flush >= FLUSH_SECONDS
        if due:
            _last_flush = time.monotonic()
    if due:
        flush()


def flush() -> None:
    client = get_redis()
    with _lock:
        batch = dict(_pending)
        _pending.clear()
    if client is None or not batch:
        return
    try:
        pipe = client.pipeline(transaction=False)
        for field, count in batch.items():
            pipe.hincrby(_REDIS_KEY, field, count)
        pipe.execute()
    except Exception:
        with _lock:
            _pending.update(batch)


def _percentile(buckets: list[tuple[float, int]], q: float) -> float | None:
    total = sum(count for _, count in buckets)
    if not total:
        return None
    rank = q * total
    seen = 0
    for bound, count in buckets:
        seen += count
        if seen >= rank:
            return bound
    return buckets[-1][0]


def snapshot() -> dict[str, Any]:
    """requests.total, requests.by_status, requests.latency_ms.<group>.{p50,p95,p99} (C13)."""
    flush()
    client = get_redis()
    raw: dict[str, int]
    if client is not None:
        raw = {
            (k.decode() if isinstance(k, bytes) else k): int(v) for k, v in client.hgetall(_REDIS_KEY).items()
        }
    else:
        with _lock:
            raw = dict(_local)
    by_status = {f"{n}xx": raw.get(f"status:{n}xx", 0) for n in range(2, 6)}
    groups: dict[str, list[tuple[float, int]]] = {}
    for field, count in raw.items():
        if field.startswith("lat:"):
            _, group, bound = field.split(":", 2)
            groups.setdefault(group, []).append((float("inf") if bound == "inf" else float(bound), count))
    latency = {}
    for group, buckets in sorted(groups.items()):
        buckets.sort()
        latency[group] = {
            "count": sum(c for _, c in buckets),
            "p50": _percentile(buckets, 0.50),
            "p95": _percentile(buckets, 0.95),
            "p99": _percentile(buckets, 0.99),
        }
    return {"total": raw.get("total", 0), "by_status": by_status, "latency_ms": latency}


def reset() -> None:
    with _lock:
        _pending.clear()
        _local.clear()
    client = get_redis()
    if client is not None:
        client.delete(_REDIS_KEY)
