"""One Redis client per process, when REDIS_URL is set, and what an unreachable Redis means.

Redis holds only what can be lost or rebuilt (docs/deploy.md, "When Redis is down"): rate-limit
counters, the key cache's stamp, request metrics, the broker's messages (each announces a
database row that beat claims again). So an unreachable Redis degrades the service; it never
fails a request. The first call that fails marks Redis down for REDIS_RETRY_SECONDS, and while
it is down get_redis() answers None: every caller takes its in-process path, the one the
embedded default always takes, and no request waits on a connect timeout. The first call after
that pings Redis once; when it answers, the functions registered with on_redis_back() run (the
keys app renews its cache stamp there, since a key changed during the outage could not renew
it) and Redis is used again."""

import logging
import threading
import time
from collections.abc import Callable
from functools import lru_cache
from typing import TypedDict

import redis
from django.conf import settings

logger = logging.getLogger("trustcal.redis")

RedisError = redis.RedisError

_lock = threading.Lock()
_down_until = 0.0  # time.monotonic() before which Redis is not tried
_down_since: float | None = None  # time.time() of the failure that began the outage
_outages = 0
_back_hooks: list[Callable[[], None]] = []


@lru_cache(maxsize=1)
def redis_client() -> redis.Redis:
    """The client whatever the outage mark says: for /health, which checks Redis itself."""
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2, health_check_interval=30
    )


def get_redis() -> redis.Redis | None:
    """The client; None without REDIS_URL, and while Redis is marked down."""
    if not settings.REDIS_URL:
        return None
    if _down_since is None:
        return redis_client()
    if time.monotonic() < _down_until or not _probe():
        return None
    return redis_client()


def _probe() -> bool:
    """After the retry delay: one ping (one thread pings, the others keep the local path)."""
    global _down_until
    with _lock:
        if _down_since is None:
            return True
        if time.monotonic() < _down_until:
            return False
        _down_until = time.monotonic() + float(settings.REDIS_RETRY_SECONDS)  # the others wait
    try:
        redis_client().ping()
    except RedisError as exc:
        redis_failed(exc)
        return False
    _redis_back()
    return True


def redis_failed(exc: BaseException) -> None:
    """A Redis call failed: mark Redis down for REDIS_RETRY_SECONDS (logged once an outage)."""
    global _down_until, _down_since, _outages
    with _lock:
        _down_until = time.monotonic() + float(settings.REDIS_RETRY_SECONDS)
        if _down_since is not None:
            return
        _down_since = time.time()
        _outages += 1
    logger.warning(
        "Redis unreachable (%s); serving from this process's state until it answers", type(exc).__name__
    )


def _redis_back() -> None:
    global _down_since
    with _lock:
        if _down_since is None:
            return
        lasted = time.time() - _down_since
        _down_since = None
    logger.warning("Redis answers again after %.1f s", lasted)
    for hook in list(_back_hooks):
        try:
            hook()
        except RedisError as exc:
            redis_failed(exc)


def on_redis_back(hook: Callable[[], None]) -> None:
    """Run `hook` each time Redis answers again after an outage of this process's."""
    if hook not in _back_hooks:
        _back_hooks.append(hook)


class RedisStatus(TypedDict):
    configured: bool
    reachable: bool
    down_since: float | None
    outages: int


def redis_status() -> RedisStatus:
    """For /health and /metrics: whether this process uses Redis now, since when not."""
    down = _down_since
    return {
        "configured": bool(settings.REDIS_URL),
        "reachable": bool(settings.REDIS_URL) and down is None,
        "down_since": down,
        "outages": _outages,
    }


def redis_reset() -> None:
    """Forget an outage (tests)."""
    global _down_until, _down_since
    with _lock:
        _down_until, _down_since = 0.0, None


@lru_cache(maxsize=16)
def redis_script(source: str):
    """A registered Lua script: called with EVALSHA, reloaded automatically if Redis lost it."""
    return redis_client().register_script(source)
