"""GET /health (docs/reference/system.md): each dependency checked and timed; the database down is `unhealthy`
(503), anything else failing is `degraded`."""

import datetime as dt
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Q
from django.utils import timezone

from config.exceptions import HealthProblem
from config.jsondoc import JSONObject
from config.metrics import task_counts
from config.redis import get_redis, redis_client
from config.timeutils import isoformat


def _timed(check: Callable[[], JSONObject | None]) -> JSONObject:
    started = time.perf_counter()
    try:
        extra = check() or {}
        result = {"status": "pass", **extra}
    except HealthProblem as exc:
        result = {"status": "fail", "error": str(exc)}
    except Exception as exc:
        result = {"status": "fail", "error": type(exc).__name__}
    result["latency_ms"] = round((time.perf_counter() - started) * 1000, 2)
    return result


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_cache() -> JSONObject:
    """A write and read-back of a key of this call's own (random, deleted after): concurrent
    checks never see each other's values, so a healthy cache always passes (one shared key
    made about half of 16 concurrent calls report a mismatch)."""
    if settings.REDIS_URL:
        redis_client().ping()  # the cache itself answers misses while Redis is down (config/cache.py)
    key = f"trustcal:health:{uuid.uuid4().hex}"
    token = uuid.uuid4().hex
    cache.set(key, token, 30)
    try:
        if cache.get(key) != token:
            raise RuntimeError("cache read-back mismatch")
    finally:
        cache.delete(key)
    return {"backend": "redis" if settings.REDIS_URL else "local-memory"}


@lru_cache(maxsize=4)
def _broker_client(url: str):
    import redis

    return (
        redis_client()
        if url == settings.REDIS_URL
        else redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    )


def _check_broker() -> JSONObject:
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        _broker_client(url).ping()
        return {"backend": "redis"}
    if url.startswith(("trustcalfs://", "filesystem://")):
        folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        # A private probe name: concurrent health checks must not unlink each other's file.
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".health-", suffix=".probe"):
            pass
        return {"backend": "embedded-filesystem", "queued": _queued(folder)}
    return {"backend": url.split(":", 1)[0]}


def _queued(folder: Path) -> int:
    return sum(1 for _ in folder.glob("*.msg"))


def _check_workers() -> JSONObject:
    from config.models import WorkerHeartbeat

    since = timezone.now() - dt.timedelta(seconds=settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS)
    figures = WorkerHeartbeat.objects.aggregate(
        online=Count("id", filter=Q(last_seen__gte=since)), latest=Max("last_seen")
    )
    online, latest = figures["online"], figures["latest"]
    if not online:
        raise RuntimeError("no worker heartbeat in the last 60 s")
    # Tasks sent again after a database error, and tasks that failed (docs/deploy.md,
    # "Database connections"): a worker starved of connections shows here before its work is late.
    return {"online": online, "last_heartbeat_at": isoformat(latest), "tasks": task_counts()}


def _app_checks() -> dict[str, JSONObject]:
    """The apps' own checks (an app's `engine.health_checks() -> {name: check}`, each check
    shaped like the ones above), e.g. the checkpoint signing key: a failing one makes the
    service `degraded`, never `unhealthy`, since it pauses that feature only and a balancer
    must keep sending requests to the host."""
    from config.engines import app_hooks

    return {name: _timed(check) for hook in app_hooks("health_checks") for name, check in hook().items()}


def health_snapshot() -> tuple[JSONObject, int]:
    checks = {"database": _timed(_check_database)}
    if checks["database"]["status"] == "pass":
        checks["cache"] = _timed(_check_cache)
        checks["broker"] = _timed(_check_broker)
        workers = _timed(_check_workers)
        if workers["status"] == "fail":
            workers["online"] = 0
        checks["workers"] = workers
        checks.update(_app_checks())
        status = "healthy" if all(c["status"] == "pass" for c in checks.values()) else "degraded"
        http_status = 200
    else:
        checks["cache"] = _timed(_check_cache)
        checks["broker"] = _timed(_check_broker)
        checks["workers"] = {"status": "fail", "error": "database unreachable", "online": 0}
        status, http_status = "unhealthy", 503
    body = {
        "status": status,
        "version": settings.SERVICE_VERSION,
        "timestamp": isoformat(timezone.now()),
        "checks": checks,
    }
    return body, http_status


def broker_depth() -> int | None:
    url = settings.CELERY_BROKER_URL
    try:
        if url.startswith(("trustcalfs://", "filesystem://")):
            return _queued(Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]))
        client = get_redis()
        if client is not None and url == settings.REDIS_URL:
            return int(client.llen("celery"))
    except Exception:
        return None
    return None
