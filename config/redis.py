"""One Redis client per process, when REDIS_URL is set."""

from functools import lru_cache

import redis
from django.conf import settings


@lru_cache(maxsize=1)
def get_redis() -> redis.Redis | None:
    if not settings.REDIS_URL:
        return None
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2, health_check_interval=30
    )


@lru_cache(maxsize=16)
def redis_script(source: str):
    """A registered Lua script: called with EVALSHA, reloaded automatically if Redis lost it."""
    client = get_redis()
    assert client is not None, "redis_script() needs REDIS_URL"
    return client.register_script(source)
