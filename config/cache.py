"""Django's Redis cache, degraded as config/redis.py says when Redis is unreachable
(docs/deploy.md, "When Redis is down"): while Redis is marked down, and on the call that finds
it down, a read is a miss, a write is dropped, and `add` succeeds. What the service keeps in
this cache is what it can rebuild (cached figures) or do without (a marker that spares a
duplicate task, a lock that spares duplicate work), so no request fails for it."""

from collections.abc import Callable
from typing import Any

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


# Any: cached values and keyword arguments are Django's cache API's own
class DegradingRedisCache(RedisCache):
    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return _degraded(lambda: super(DegradingRedisCache, self).get(key, default, version), default)

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return _degraded(lambda: super(DegradingRedisCache, self).get_many(keys, version), {})

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).has_key(key, version), False)

    def set(self, *args: Any, **kwargs: Any) -> None:
        _degraded(lambda: super(DegradingRedisCache, self).set(*args, **kwargs), None)

    def set_many(self, *args: Any, **kwargs: Any) -> list[Any]:
        return _degraded(lambda: super(DegradingRedisCache, self).set_many(*args, **kwargs), [])

    def add(self, *args: Any, **kwargs: Any) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).add(*args, **kwargs), True)

    def touch(self, *args: Any, **kwargs: Any) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).touch(*args, **kwargs), False)

    def delete(self, *args: Any, **kwargs: Any) -> bool:
        return _degraded(lambda: super(DegradingRedisCache, self).delete(*args, **kwargs), False)

    def delete_many(self, *args: Any, **kwargs: Any) -> None:
        _degraded(lambda: super(DegradingRedisCache, self).delete_many(*args, **kwargs), None)
