"""Request metrics: counted in-process on the hot path (no I/O), folded into Redis every
few seconds when REDIS_URL is set so that /metrics sees every process and host.

Requests are grouped by the route they resolved to (`/v1/webhooks/:pk/test`), never by the
raw path: the set of groups is the set of routes, whatever clients send, and a path that
resolves to no route counts in the one `unmatched` group. Label values are escaped by
prometheus_client when the text exposition is rendered."""

import math
import re
import threading
import time
from collections import Counter

import redis
from django.http import HttpRequest

from config.jsondoc import JSONObject
from config.redis import RedisError, get_redis, redis_failed

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
UNMATCHED = "unmatched"
_REDIS_KEY = "trustcal:metrics:requests"
FLUSH_SECONDS = 5.0
_SEP = "|"  # field separator in the counters: never part of a route label
_OVER = "over"  # sums of the requests slower than the last bound, per group

_lock = threading.Lock()
# Held from taking the pending figures until Redis has them, so that a read, which flushes first,
# waits for a write already under way: figures taken are otherwise in neither place for a moment.
# Taken before _lock, never under it; a request that is due to flush does not wait for it.
_flush_lock = threading.Lock()
_pending: Counter[str] = Counter()  # not yet folded into Redis
_local: Counter[str] = Counter()  # everything this process saw (used without Redis)
_pending_sums: dict[str, float] = {}
_local_sums: dict[str, float] = {}
_last_flush = time.monotonic()

_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


def route_group(request: HttpRequest) -> str:
    """The route pattern the request resolved to, readable (`/v1/webhooks/:pk/test`), or
    `unmatched`. Finite by construction: one value per route in the URL configuration."""
    match = getattr(request, "resolver_match", None)
    route = getattr(match, "route", None)
    if not route:
        return UNMATCHED
    label = _GROUP.sub(lambda m: ":" + m.group(1), route)
    label = label.replace("^", "").replace("/?$", "").rstrip("$").rstrip("/")
    return "/" + label.lstrip("/")


def _bucket(duration_ms: float) -> str:
    for bound in BUCKETS_MS:
        if duration_ms <= bound:
            return str(bound)
    return "inf"


def record_request(group: str, status: int, duration_ms: float) -> None:
    bucket = _bucket(duration_ms)
    fields = ("total", f"status{_SEP}{status // 100}xx", f"lat{_SEP}{group}{_SEP}{bucket}")
    sums = [group] + ([f"{_OVER}{_SEP}{group}"] if bucket == "inf" else [])
    global _last_flush
    with _lock:
        for field in fields:
            _pending[field] += 1
            _local[field] += 1
        for name in sums:  # the group's total, and the total of its requests beyond the last bound
            _pending_sums[name] = _pending_sums.get(name, 0.0) + duration_ms
            _local_sums[name] = _local_sums.get(name, 0.0) + duration_ms
        due = time.monotonic() - _last_flush >= FLUSH_SECONDS
        if due:
            _last_flush = time.monotonic()
    if due:
        flush(wait=False)


def flush(*, wait: bool = True) -> None:
    """Fold this process's pending figures into Redis. A read waits for a flush under way in
    another thread (`wait`); a request that finds one under way leaves its figures pending for
    the next flush instead."""
    if not _flush_lock.acquire(blocking=wait):
        return
    try:
        _flush_pending(get_redis())
    finally:
        _flush_lock.release()


def _flush_pending(client: redis.Redis | None) -> None:
    with _lock:
        batch, sums = dict(_pending), dict(_pending_sums)
        _pending.clear()
        _pending_sums.clear()
    if client is None or not batch:
        return
    try:
        pipe = client.pipeline(transaction=False)
        for field, count in batch.items():
            pipe.hincrby(_REDIS_KEY, field, count)
        for group, total in sums.items():
            pipe.hincrbyfloat(_REDIS_KEY, f"sum{_SEP}{group}", total)
        pipe.execute()
    except RedisError as exc:
        redis_failed(exc)  # kept pending for the flush after Redis answers again
        with _lock:
            _pending.update(batch)
            for group, total in sums.items():
                _pending_sums[group] = _pending_sums.get(group, 0.0) + total


def record_task(outcome: str) -> None:
    """A Celery task of this process was `retried` or `failed` (config/celery.py); folded into
    Redis now, since a worker serves no request that would flush it."""
    with _lock:
        _pending[f"task{_SEP}{outcome}"] += 1
        _local[f"task{_SEP}{outcome}"] += 1
    flush(wait=False)


def _percentile(buckets: list[tuple[float, int]], q: float, *, over_ms: float = 0.0) -> float | None:
    """The upper bound of the bucket holding the q-quantile. In the open bucket past the last
    bound it is the mean duration of the requests there (`over_ms` is their total), always a
    finite number: JSON has no infinity, and one slow request must not break /metrics."""
    total = sum(count for _, count in buckets)
    if not total:
        return None
    rank = q * total
    seen = 0
    for bound, count in buckets:
        seen += count
        if seen >= rank:
            if math.isinf(bound):
                return round(max(over_ms / count, BUCKETS_MS[-1]), 1) if count else float(BUCKETS_MS[-1])
            return bound
    return float(BUCKETS_MS[-1])


def _raw() -> tuple[dict[str, int], dict[str, float]]:
    flush()
    client = get_redis()
    stored = None
    if client is not None:
        try:
            stored = client.hgetall(_REDIS_KEY)
        except RedisError as exc:
            redis_failed(exc)
    if stored is None:  # no Redis, or unreachable: what this process saw
        with _lock:
            return dict(_local), dict(_local_sums)
    counts: dict[str, int] = {}
    sums: dict[str, float] = {}
    for k, v in stored.items():
        key = k.decode() if isinstance(k, bytes) else k
        if key.startswith("sum" + _SEP):
            sums[key[4:]] = float(v)
        else:
            counts[key] = int(v)
    return counts, sums


def histograms() -> dict[str, JSONObject]:
    """Per route group: non-cumulative `buckets` [(upper bound ms, count)], `count`, `sum_ms`."""
    raw, sums = _raw()
    groups: dict[str, list[tuple[float, int]]] = {}
    for field, count in raw.items():
        if field.startswith("lat" + _SEP):
            _, group, bound = field.split(_SEP, 2)
            groups.setdefault(group, []).append((float("inf") if bound == "inf" else float(bound), count))
    out = {}
    for group, buckets in sorted(groups.items()):
        buckets.sort()
        out[group] = {
            "buckets": buckets,
            "count": sum(c for _, c in buckets),
            "sum_ms": sums.get(group, 0.0),
            "over_ms": sums.get(f"{_OVER}{_SEP}{group}", 0.0),
        }
    return out


def task_counts() -> dict[str, int]:
    """Celery tasks `retried` and `failed` (with Redis every worker's; else this process's)."""
    raw, _ = _raw()
    return {outcome: raw.get(f"task{_SEP}{outcome}", 0) for outcome in ("retried", "failed")}


def snapshot() -> JSONObject:
    """requests.total, requests.by_status, requests.latency_ms.<route>.{count,p50,p95,p99} (docs/reference/system.md)."""
    raw, _ = _raw()
    by_status = {f"{n}xx": raw.get(f"status{_SEP}{n}xx", 0) for n in range(2, 6)}
    latency = {
        group: {
            "count": figures["count"],
            "p50": _percentile(figures["buckets"], 0.50, over_ms=figures["over_ms"]),
            "p95": _percentile(figures["buckets"], 0.95, over_ms=figures["over_ms"]),
            "p99": _percentile(figures["buckets"], 0.99, over_ms=figures["over_ms"]),
        }
        for group, figures in histograms().items()
    }
    tasks = {
        outcome: raw.get(f"task{_SEP}{outcome}", 0) for outcome in ("retried", "failed")
    }  # task_counts()
    return {"total": raw.get("total", 0), "by_status": by_status, "latency_ms": latency, "tasks": tasks}


def reset() -> None:
    with _flush_lock:  # a write under way would otherwise put figures back after the delete
        with _lock:
            _pending.clear()
            _local.clear()
            _pending_sums.clear()
            _local_sums.clear()
        client = get_redis()
        if client is not None:
            client.delete(_REDIS_KEY)
