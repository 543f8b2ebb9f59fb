"""Django's Redis cache, degraded as config/redis.py says when Redis is unreachable
(docs/deploy.md, "When Redis is down"): while Redis is marked down, and on the call that finds
it down, a read is a miss, a write is dropped, and `add` succeeds. What the service keeps in
this cache is what it can rebuild (cached figures) or do without (a marker that spares a
duplicate task, a lock that spares duplicate work), so no request fails for it."""

from collections.abc import Callable, Iterable

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache

from config.redis import RedisError, get_redis, redis_failed


def _degraded[T](call: Callable[[], T], fallback: T) -> T:
    if get_redis() is None:
        return fallback
    try:
        return call()
    except RedisError as exc:
        redis_failed(exc)
        return fallback


# Django's own signatures, with the keys the service uses (text) and values it only stores and returns.
class DegradingRedisCache(RedisCache):
    def get(self, key: str, default: object = None, version: int | None = None) -> object:
        return _degraded(lambda: super(DegradingRedisCache, self).get(key, default, version), default)

    def get_many(self, keys: Iterable[str], version: int | None = None) -> dict[str, object]:
        return _degraded(lambda: super(DegradingRedisCache, self).get_many(keys, version), {})

    def has_key(self, key: str, version: int | None = None) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).has_key(key, version), False)

    def set(
        self, key: str, value: object, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        _degraded(lambda: super(DegradingRedisCache, self).set(key, value, timeout, version), None)

    def set_many(
        self, data: dict[str, object], timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None
    ) -> list[str]:
        return _degraded(lambda: super(DegradingRedisCache, self).set_many(data, timeout, version), [])

    def add(
        self, key: str, value: object, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).add(key, value, timeout, version), True)

    def touch(self, key: str, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).touch(key, timeout, version), False)

    def delete(self, key: str, version: int | None = None) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).delete(key, version), False)

    def delete_many(self, keys: Iterable[str], version: int | None = None) -> None:
        _degraded(lambda: super(DegradingRedisCache, self).delete_many(keys, version), None)
