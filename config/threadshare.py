"""A share of the web threads per customer, and per client address before authentication
(docs/reference/limits.md, "Web threads").

A web thread serving a request is held until the answer is written, also while it waits for
a slow body; without a bound one customer could hold every thread of a process and stall every
other customer (and /health). So a request holds a slot of its customer from the moment its key
authenticates (before any byte of its body is read) to its answer; one that waits on its client
before that, reading a body or draining the unread rest of one (a console form, a 401), holds a
slot of its client address (config/clientaddr.py) instead, and so does a connection whose
request line and headers are still arriving (config/headerread.py). A customer may hold at most
`TRUSTCAL_THREAD_SHARE` of the process's threads (at least one); a client address before
authentication a fixed small number, `TRUSTCAL_ADDRESS_THREADS` (at most a quarter of the
threads, at least one), so that a few addresses cannot hold the process. A request beyond its
bound answers 429 at once, and its connection is closed instead of its body drained. Requests
that never wait on their client before authentication (a GET whose headers came at once,
/health) take no address slot, so the clients sharing one address (all of them, behind a proxy
not named in TRUSTCAL_TRUSTED_PROXIES) are not limited together; a console form gives its
address slot back once its body is read.

The count is per process, not in Redis, on purpose: threads belong to a process, and a bound
across processes would not stop one customer from filling the one process its connections
landed on. The thread count comes from gunicorn (`gunicorn.conf.py` calls `web_threads_set`
in each worker); under any other server (runserver, the test client) there is no bound."""

import math
import threading
from collections import Counter

from django.conf import settings
from django.http import HttpRequest

from config.clientaddr import client_address
from config.exceptions import DomainError
from config.ratelimit import register_limiter

_SLOT = "trustcal_thread_slot"
ADDRESS = "addr:"  # a client address's subject: addr:<address>
# Set on a request refused for its share: its unread body is not drained, its connection closes.
CLOSE_CONNECTION = "trustcal_close_connection"


class ThreadShare:
    def __init__(self) -> None:
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.threads: int | None = None
        register_limiter(self)

    def limit(self, subject: str = "") -> int | None:
        """Slots one subject may hold at once, or None when there is no bound: a customer its
        share, a client address (`addr:...`) its fixed number."""
        if self.threads is None or self.threads < 2:
            return None
        if subject.startswith(ADDRESS):
            return max(1, min(int(settings.ADDRESS_THREADS), self.threads // 4))
        share = float(settings.THREAD_SHARE)
        if share <= 0 or share >= 1:
            return None
        return max(1, math.floor(self.threads * share))

    def held(self, subject: str) -> int:
        with self._lock:
            return self._held[subject]

    def take(self, request: HttpRequest, subject: str) -> bool:
        """Move the request's slot to `subject` (its first slot, or from its address to its
        customer). False, holding nothing, when `subject` already holds its share."""
        previous: str | None = getattr(request, _SLOT, None)
        if previous is not None:
            self.release(previous)
            setattr(request, _SLOT, None)
        if not self.take_slot(subject):
            return False
        setattr(request, _SLOT, subject)
        return True

    def take_slot(self, subject: str) -> bool:
        """One slot of `subject`, held by no request (a connection's headers); False when it
        already holds its bound. Given back by release()."""
        limit = self.limit(subject)
        with self._lock:
            if limit is not None and self._held[subject] >= limit:
                return False
            self._held[subject] += 1
            return True

    def release(self, subject: str) -> None:
        with self._lock:
            self._release(subject)

    def give_back(self, request: HttpRequest, *, address_only: bool = False) -> None:
        """The request's slot (with `address_only`, only if it is its address's: a console
        form whose body has been read waits on its client no more)."""
        subject: str | None = getattr(request, _SLOT, None)
        if subject is None or (address_only and not subject.startswith(ADDRESS)):
            return
        self.release(subject)
        setattr(request, _SLOT, None)

    def _release(self, subject: str) -> None:
        self._held[subject] -= 1
        if self._held[subject] <= 0:
            del self._held[subject]

    def reset(self) -> None:
        with self._lock:
            self._held.clear()


thread_share = ThreadShare()


def share_message(holder: str, subject: str = "") -> str:
    return (
        f"{holder[0].upper()}{holder[1:]} already holds its share of the web threads "
        f"({thread_share.limit(subject)}); try again in a moment (docs/reference/limits.md, Web threads)."
    )


def web_threads_set(threads: int) -> None:
    """Called by gunicorn.conf.py in each web worker with its thread count."""
    thread_share.threads = threads


class ShareExceeded(DomainError):
    """A client address already waits on its share of the threads: 429, connection closed."""

    code = "RATE_LIMIT_EXCEEDED"
    status = 429
    title = "Rate limit exceeded"

    def __init__(self) -> None:
        super().__init__(share_message("this client address", ADDRESS), headers={"Retry-After": "1"})


def admit_wait(request: HttpRequest) -> bool:
    """May this request wait on its client (read a body, drain one)? Yes when it holds a slot
    (its customer's); else when its client address has a free one, which it then holds."""
    if getattr(request, _SLOT, None) is not None:
        return True
    if thread_share.take(request, f"{ADDRESS}{client_address(request.META)}"):
        return True
    setattr(request, CLOSE_CONNECTION, True)
    return False
