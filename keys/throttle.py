"""Failed authentication, throttled per client address (docs/reference/access.md, "Failed
authentications"): after AUTH_FAILURES_PER_MINUTE unknown, revoked or expired keys in a fixed
one-minute window, that address's unknown keys answer 429 without being looked up, so keys
cannot be guessed at the speed of the service (config/failures.py). A valid key always works:
while an address is throttled, a presented key is looked up only when its digest is among the
digests of the keys that exist (KnownDigests, held in each process), so a guess costs no query
and a real key, even one from the same address as the guesser, goes through. A key that
authenticated in this process within the last RELOAD_SECONDS skips the address's count
altogether (KnownDigests.recently_valid): the count cannot change its answer, and reading it is
a round trip to Redis on every request."""

import threading
import time

from django.conf import settings

from config.failures import FailureWindow
from config.ratelimit import register_limiter
from keys.models import ApiKey

WINDOW_SECONDS = 60
# How often, at most, a throttled address's unknown key makes a process read the digests again
# (a key created by another process since the last read is then found).
RELOAD_SECONDS = 1.0
PREFIX_CHARS = 16  # 64 bits of the digest: a prefix shared by chance only costs one lookup

auth_failures = FailureWindow(
    "authfail",
    limit=lambda: int(getattr(settings, "AUTH_FAILURES_PER_MINUTE", 20)),
    window_seconds=lambda: WINDOW_SECONDS,
)


class KnownDigests:
    """The digest prefixes of every key that is not revoked, read from the database at most once
    per RELOAD_SECONDS and only while some address is throttled. It answers "may this be a key?"
    without a query per request; a yes is confirmed by the ordinary lookup."""

    def __init__(self) -> None:
        self._prefixes: frozenset[str] = frozenset()
        self._loaded_at = float("-inf")
        self._lock = threading.Lock()
        self._valid_at: dict[str, float] = {}  # digest -> when it last authenticated here
        register_limiter(self)

    def _load(self) -> None:
        digests = ApiKey.objects.exclude(status=ApiKey.Status.REVOKED).values_list("digest", flat=True)
        self._prefixes = frozenset(digest[:PREFIX_CHARS] for digest in digests.iterator(chunk_size=5000))

    def may_exist(self, digest: str) -> bool:
        prefix = digest[:PREFIX_CHARS]
        if prefix in self._prefixes:
            return True
        with self._lock:
            if time.monotonic() - self._loaded_at < RELOAD_SECONDS:
                return prefix in self._prefixes
            self._loaded_at = time.monotonic()
            self._load()
            return prefix in self._prefixes

    def recently_valid(self, digest: str) -> bool:
        """Did this key authenticate in this process within RELOAD_SECONDS? Its address's
        failure count is then not read: a key that exists is looked up from a throttled address
        too, and a key revoked meanwhile by another process is refused by the lookup itself, as
        it is while the other processes' digests are at most RELOAD_SECONDS old."""
        seen = self._valid_at.get(digest)
        return seen is not None and time.monotonic() - seen < RELOAD_SECONDS

    def authenticated(self, digest: str) -> None:
        """A key authenticated (see recently_valid); the record is bounded in size."""
        if len(self._valid_at) > 10_000:
            self._valid_at = {}
        self._valid_at[digest] = time.monotonic()

    def add(self, digest: str) -> None:
        """A key this process just created is known at once."""
        with self._lock:
            self._prefixes = self._prefixes | {digest[:PREFIX_CHARS]}

    def discard(self, digest: str) -> None:
        """A key this process just revoked is a guess again at once (others read it within a
        second of their next miss)."""
        with self._lock:
            self._prefixes = self._prefixes - {digest[:PREFIX_CHARS]}
            self._valid_at.pop(digest, None)

    def reset(self) -> None:
        with self._lock:
            self._prefixes = frozenset()
            self._loaded_at = float("-inf")
            self._valid_at = {}


known_digests = KnownDigests()
