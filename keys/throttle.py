"""Failed authentication, throttled per client address: after AUTH_FAILURES_PER_MINUTE
failures in a fixed one-minute window, the address answers 429 without its key being looked
up, so keys cannot be guessed at the speed of the service. Across processes with Redis; in
the process otherwise (the embedded default runs one web process)."""

import threading
import time

from django.conf import settings

from config.ratelimit import register_limiter
from config.redis import get_redis

WINDOW_SECONDS = 60


class AuthFailureThrottle:
    namespace = "authfail"

    def __init__(self) -> None:
        self._local: dict[str, tuple[int, int]] = {}  # address -> (window, failures)
        self._lock = threading.Lock()
        register_limiter(self)

    @staticmethod
    def limit() -> int:
        return int(getattr(settings, "AUTH_FAILURES_PER_MINUTE", 20))

    def _key(self, address: str, window: int) -> str:
        return f"trustcal:{self.namespace}:{window}:{address}"

    def blocked_for(self, address: str, now: float | None = None) -> int:
        """Seconds until this address may try again, 0 when it may now."""
        now = time.time() if now is None else now
        window = int(now // WINDOW_SECONDS)
        client = get_redis()
        if client is not None:
            failures = int(client.get(self._key(address, window)) or 0)
        else:
            with self._lock:
                seen_window, failures = self._local.get(address, (window, 0))
                failures = failures if seen_window == window else 0
        if failures < self.limit():
            return 0
        return max(1, int((window + 1) * WINDOW_SECONDS - now + 0.999))

    def fail(self, address: str, now: float | None = None) -> None:
        now = time.time() if now is None else now
        window = int(now // WINDOW_SECONDS)
        client = get_redis()
        if client is not None:
            key = self._key(address, window)
            pipe = client.pipeline(transaction=False)
            pipe.incr(key)
            pipe.expire(key, WINDOW_SECONDS * 2)
            pipe.execute()
            return
        with self._lock:
            seen_window, failures = self._local.get(address, (window, 0))
            self._local[address] = (window, (failures if seen_window == window else 0) + 1)
            if len(self._local) > 100_000:  # a flood of addresses cannot grow memory for ever
                self._local = {a: v for a, v in self._local.items() if v[0] == window}

    def reset(self) -> None:
        with self._lock:
            self._local.clear()
        client = get_redis()
        if client is not None:
            for key in client.scan_iter(f"trustcal:{self.namespace}:*"):
                client.delete(key)


auth_failures = AuthFailureThrottle()
