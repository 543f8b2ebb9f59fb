"""Failures counted in fixed windows per subject (a client address, a user name): after
`limit` failures in one window the subject is refused until the window ends, without the
credential being checked. Across processes with Redis; in the process otherwise (the embedded
default runs one web process). Used for API key authentication (keys/throttle.py) and for the
staff console's sign-in (config/admin_site.py)."""

import threading
import time
from collections.abc import Callable

from config.ratelimit import register_limiter
from config.redis import RedisError, get_redis, redis_failed


class FailureWindow:
    def __init__(
        self, namespace: str, *, limit: Callable[[], int], window_seconds: Callable[[], int]
    ) -> None:
        self.namespace = namespace
        self.limit = limit
        self.window_seconds = window_seconds
        self._local: dict[str, tuple[int, int]] = {}  # subject -> (window, failures)
        self._lock = threading.Lock()
        register_limiter(self)

    def _key(self, subject: str, window: int) -> str:
        return f"trustcal:{self.namespace}:{window}:{subject}"

    def blocked_for(self, subject: str, now: float | None = None) -> int:
        """Seconds until this subject may try again, 0 when it may now."""
        now = time.time() if now is None else now
        span = self.window_seconds()
        window = int(now // span)
        failures = self._redis_failures(subject, window)
        if failures is None:
            with self._lock:
                seen_window, failures = self._local.get(subject, (window, 0))
                failures = failures if seen_window == window else 0
        if failures < self.limit():
            return 0
        return max(1, int((window + 1) * span - now + 0.999))

    def _redis_failures(self, subject: str, window: int) -> int | None:
        """The subject's failures in Redis, or None without Redis (or while it is unreachable:
        a process then counts only the failures it saw, docs/deploy.md, "When Redis is down")."""
        client = get_redis()
        if client is None:
            return None
        try:
            return int(client.get(self._key(subject, window)) or 0)
        except RedisError as exc:
            redis_failed(exc)
            return None

    def fail(self, subject: str, now: float | None = None) -> None:
        now = time.time() if now is None else now
        span = self.window_seconds()
        window = int(now // span)
        client = get_redis()
        if client is not None:
            key = self._key(subject, window)
            pipe = client.pipeline(transaction=False)
            pipe.incr(key)
            pipe.expire(key, span * 2)
            try:
                pipe.execute()
                return
            except RedisError as exc:
                redis_failed(exc)  # counted in this process until Redis answers again
        with self._lock:
            seen_window, failures = self._local.get(subject, (window, 0))
            self._local[subject] = (window, (failures if seen_window == window else 0) + 1)
            if len(self._local) > 100_000:  # a flood of subjects cannot grow memory for ever
                self._local = {a: v for a, v in self._local.items() if v[0] == window}

    def reset(self) -> None:
        with self._lock:
            self._local.clear()
        client = get_redis()
        if client is not None:
            for key in client.scan_iter(f"trustcal:{self.namespace}:*"):
                client.delete(key)
