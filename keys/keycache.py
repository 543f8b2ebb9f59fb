"""The keys this process verified, so that an authenticated request need not read its key from
the database (docs/reference/access.md, Authentication). Only with Redis and the rate limits on:
the tier bucket's round trip to Redis (config/ratelimit.py) also reads the keys' stamp, which
every change to a key renews once it commits (keys.services.KEYS_STAMP). A cached key is used
only while the stamp is the token read before its lookup; otherwise it is read again. A missing
stamp (Redis flushed or restarted) is set anew, so it differs from every token read before.

Entries are held by the key's digest (never its value), at most MAX_KEYS of them, each for at
most MAX_AGE_SECONDS (a bound should a stamp's renewal have failed)."""

import threading
import time

from django.conf import settings

from config.ratelimit import BucketState, TokenBucket, register_limiter, stamp_read, stamp_renew
from config.redis import get_redis
from keys.models import ApiKey
from keys.selectors import KeyRow, api_key_from_row, api_key_row
from keys.services import KEYS_STAMP

MAX_KEYS = 10_000
MAX_AGE_SECONDS = 60.0


class VerifiedKeys:
    def __init__(self) -> None:
        self._rows: dict[str, tuple[KeyRow, str, float]] = {}  # digest -> (row, stamp, when)
        self._lock = threading.Lock()
        register_limiter(self)

    def get(self, digest: str) -> tuple[KeyRow, str] | None:
        entry = self._rows.get(digest)
        if entry is None or time.monotonic() - entry[2] > MAX_AGE_SECONDS:
            return None
        return entry[0], entry[1]

    def put(self, digest: str, row: KeyRow, stamp: str) -> None:
        with self._lock:
            if len(self._rows) >= MAX_KEYS and digest not in self._rows:
                self._rows = {}
            self._rows[digest] = (row, stamp, time.monotonic())

    def discard(self, digest: str) -> None:
        with self._lock:
            self._rows.pop(digest, None)

    def reset(self) -> None:
        with self._lock:
            self._rows = {}


verified_keys = VerifiedKeys()


def keys_cache_renew() -> None:
    """Forget this process's keys and renew the stamp (every process then reads its keys again)."""
    verified_keys.reset()
    stamp_renew(KEYS_STAMP)


def caching() -> bool:
    """Is there a cache? Not without Redis or with the rate limits off: every request reads."""
    return bool(settings.RATE_LIMITS_ENABLED) and get_redis() is not None


def key_cached(digest: str) -> tuple[ApiKey | None, str]:
    """The cached key with this digest if it is still usable, and the stamp it was read under
    (to be confirmed by the tier bucket's round trip); (None, "") when there is none."""
    entry = verified_keys.get(digest) if caching() else None
    if entry is None:
        return None, ""
    row, stamp = entry
    return api_key_from_row(row, digest=digest), stamp


def key_lookup(digest: str, *, stamp: str | None = None) -> ApiKey | None:
    """The usable key with this digest, read from the database and cached under `stamp` (the
    stamp read before this lookup: read here when not given)."""
    if stamp is None and caching():
        stamp = stamp_read(KEYS_STAMP)
    row = api_key_row(digest=digest)
    key = None if row is None else api_key_from_row(row, digest=digest)
    if row is None or key is None or not stamp:
        verified_keys.discard(digest)
    else:
        verified_keys.put(digest, row, stamp)
    return key


def tier_consume(bucket: TokenBucket, key: ApiKey, *, expect: str = "") -> BucketState:
    """The tier bucket's state for this request; with `expect`, only if the keys' stamp is still
    that token (else nothing is consumed and the state is not applied)."""
    per_minute, burst = settings.TIER_LIMITS[key.tier]
    stamp = KEYS_STAMP if caching() else ""
    return bucket.consume(key.id, per_minute=per_minute, burst=burst, stamp=stamp, expect=expect)
