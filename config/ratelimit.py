"""Rate limiters that hold across processes and hosts when Redis is configured (atomic Lua
scripts), and within the process otherwise (the embedded default runs one web process).

- TokenBucket: the per-key tier limit (docs/reference/access.md, Rate limits).
- SlidingWindow: "N accepted per sliding window per customer" limits (docs/reference/access.md, Named
  per-customer limits).
"""

import math
import secrets
import threading
import time
import weakref
from collections import deque
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Protocol

from config.redis import RedisError, get_redis, redis_failed, redis_script

_TOKEN_BUCKET_LUA = """
local stamp = ''
if KEYS[2] ~= '' then
  stamp = redis.call('GET', KEYS[2])
  if not stamp then stamp = ARGV[5]; redis.call('SET', KEYS[2], stamp) end
end
if ARGV[4] ~= '' and ARGV[4] ~= stamp then return {-1, '0', stamp} end
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil then tokens = capacity; ts = now end
if now > ts then tokens = math.min(capacity, tokens + (now - ts) * rate) end
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(math.max(now, ts)))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 60000)
return {allowed, tostring(tokens), stamp}
"""

# A stamp: a random token in Redis that every change to what it stamps replaces (stamp_renew).
# A missing stamp (Redis flushed, evicted, restarted) is set to a new random token when read, so
# it never equals a token read before.
_STAMP_READ_LUA = """
local stamp = redis.call('GET', KEYS[1])
if not stamp then stamp = ARGV[1]; redis.call('SET', KEYS[1], stamp) end
return stamp
"""


def _new_stamp() -> str:
    return secrets.token_hex(8)


def stamp_read(name: str) -> str | None:
    """The stamp's current token, or None without Redis (or while it is unreachable)."""
    if get_redis() is None:
        return None
    try:
        stamp = redis_script(_STAMP_READ_LUA)(keys=[f"trustcal:stamp:{name}"], args=[_new_stamp()])
    except RedisError as exc:
        redis_failed(exc)
        return None
    return stamp.decode() if isinstance(stamp, bytes) else str(stamp)


def stamp_renew(name: str) -> None:
    """Replace the stamp's token: every token read before differs from it."""
    client = get_redis()
    if client is not None:
        try:
            client.set(f"trustcal:stamp:{name}", _new_stamp())
        except RedisError as exc:
            redis_failed(exc)  # renewed when Redis answers again (the keys app's on_redis_back)


_SLIDING_WINDOW_LUA = """
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local member = ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, member)
  redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000) + 1000)
  return {1, count + 1, '0'}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, count, tostring(tonumber(oldest[2]) + window - now)}
"""


class Resettable(Protocol):
    def reset(self) -> None: ...


_limiters: "weakref.WeakSet[Resettable]" = weakref.WeakSet()


def register_limiter(limiter: Resettable) -> None:
    """A limiter defined elsewhere (with a reset() method) is emptied by reset_all_limiters too."""
    _limiters.add(limiter)


def reset_all_limiters() -> None:
    """Empty every limiter of this process (and their Redis keys): used between tests."""
    for limiter in list(_limiters):
        limiter.reset()


@dataclass(frozen=True)
class BucketState:
    allowed: bool
    limit_per_minute: int
    capacity: int
    tokens: float
    rate_per_second: float
    now: float
    stamp: str | None = None  # the stamp read in the same round trip (consume's `stamp`)
    applied: bool = True  # False: the stamp differed from `expect`, nothing was consumed

    @property
    def remaining(self) -> int:
        return max(0, math.floor(self.tokens))

    @property
    def reset_at(self) -> int:
        """Unix seconds when the bucket is full again."""
        return math.ceil(self.now + (self.capacity - self.tokens) / self.rate_per_second)

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil((1 - self.tokens) / self.rate_per_second))

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit_per_minute),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_at),
        }


class TokenBucket:
    """capacity = burst, refilled at per_minute / 60 tokens a second; a new bucket is full."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._local: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()
        _limiters.add(self)

    def consume(
        self,
        key: str,
        *,
        per_minute: int,
        burst: int,
        now: float | None = None,
        stamp: str = "",
        expect: str = "",
    ) -> BucketState:
        """With Redis, `stamp` names a stamp (stamp_read) read in the same round trip: the state
        carries its token. With `expect` too, nothing is consumed unless the token equals it
        (the state is then not `applied`)."""
        now = time.time() if now is None else now
        rate = per_minute / 60.0
        if get_redis() is not None:
            try:
                allowed, tokens, token = redis_script(_TOKEN_BUCKET_LUA)(
                    keys=[f"trustcal:{self.namespace}:{key}", f"trustcal:stamp:{stamp}" if stamp else ""],
                    args=[burst, rate, now, expect, _new_stamp()],
                )
            except RedisError as exc:
                redis_failed(exc)  # this process's bucket until Redis answers again
                if expect:  # the stamp cannot be confirmed: consume nothing, the caller reads again
                    return BucketState(False, per_minute, burst, float(burst), rate, now, None, False)
            else:
                token = token.decode() if isinstance(token, bytes) else str(token)
                return BucketState(
                    allowed == 1, per_minute, burst, float(tokens), rate, now, token, allowed != -1
                )
        with self._lock:
            tokens, ts = self._local.get(key, (float(burst), now))
            if now > ts:
                tokens = min(float(burst), tokens + (now - ts) * rate)
            allowed = tokens >= 1
            if allowed:
                tokens -= 1
            self._local[key] = (tokens, max(now, ts))
        return BucketState(allowed, per_minute, burst, tokens, rate, now)

    def reset(self) -> None:
        with self._lock:
            self._local.clear()
        _delete_namespace(self.namespace)


def _delete_namespace(namespace: str) -> None:
    client = get_redis()
    if client is not None:
        for key in client.scan_iter(f"trustcal:{namespace}:*"):
            client.delete(key)


@dataclass(frozen=True)
class WindowDecision:
    allowed: bool
    count: int
    retry_after: float
    member: str = ""  # the accepted hit, for refund()


# The accepted sliding-window hits of the request being served: if the request then fails for
# any reason (a later validation, a conflict, a server error), the middleware refunds them, so
# only requests that succeed count toward the per-customer limits (docs/reference/access.md, Named
# per-customer limits).
_request_hits: ContextVar[list[tuple["SlidingWindow", str, WindowDecision]] | None] = ContextVar(
    "trustcal_request_hits", default=None
)


def request_hits_begin() -> Token:
    return _request_hits.set([])


def request_hits_end(token: Token, *, succeeded: bool) -> None:
    hits = _request_hits.get() or []
    _request_hits.reset(token)
    if not succeeded:
        for limiter, key, decision in reversed(hits):
            limiter.refund(key, decision)


class SlidingWindow:
    """At most `limit` accepted hits per `window` seconds per key. Call `hit` only once the
    request has passed every other check: rejected requests never count, and the hit of a
    request that fails afterwards is refunded (request_hits_end)."""

    def __init__(self, namespace: str, *, limit: int, window_seconds: float) -> None:
        self.namespace = namespace
        self.limit = limit
        self.window = window_seconds
        self._local: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        _limiters.add(self)

    def hit(self, key: str, *, now: float | None = None) -> WindowDecision:
        decision = self._hit(key, now=time.time() if now is None else now)
        hits = _request_hits.get()
        if decision.allowed and hits is not None:
            hits.append((self, key, decision))
        return decision

    def _hit(self, key: str, *, now: float) -> WindowDecision:
        if get_redis() is not None:
            member = f"{now:.6f}:{time.perf_counter_ns()}"
            try:
                allowed, count, retry = redis_script(_SLIDING_WINDOW_LUA)(
                    keys=[f"trustcal:{self.namespace}:{key}"], args=[self.limit, self.window, now, member]
                )
            except RedisError as exc:
                redis_failed(exc)  # this process's window until Redis answers again
            else:
                return WindowDecision(bool(allowed), int(count), float(retry), member if allowed else "")
        with self._lock:
            hits = self._local.setdefault(key, deque())
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if len(hits) < self.limit:
                hits.append(now)
                return WindowDecision(True, len(hits), 0.0, repr(now))
            return WindowDecision(False, len(hits), hits[0] + self.window - now)

    def refund(self, key: str, decision: WindowDecision) -> None:
        """Take back an accepted hit whose request then failed: it never counts."""
        if not decision.allowed or not decision.member:
            return
        client = get_redis()
        if client is not None and ":" in decision.member:  # a hit Redis accepted
            try:
                client.zrem(f"trustcal:{self.namespace}:{key}", decision.member)
            except RedisError as exc:
                redis_failed(exc)  # the hit stays counted until its window ends
            return
        if ":" in decision.member:
            return  # Redis's hit, while Redis is unreachable: it stays counted until its window ends
        with self._lock:
            hits = self._local.get(key)
            if hits is not None and float(decision.member) in hits:
                hits.remove(float(decision.member))

    def reset(self) -> None:
        with self._lock:
            self._local.clear()
        _delete_namespace(self.namespace)
