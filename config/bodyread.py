"""A deadline for reading a request body (docs/reference/limits.md, "Slow request bodies").

A web thread that reads a body waits for the client; one that sends a few bytes now and then
would hold the thread for as long as it likes. Under gunicorn, a body must arrive within
BODY_READ_SECONDS plus its declared length at BODY_READ_MIN_BYTES_PER_SECOND: one watcher
thread per process shuts the reading side of a late connection down, the blocked read returns,
and the request answers 408 REQUEST_TIMEOUT (the connection then closes). A body read is left
early by a parser (a batch refused at its 1,001st item) without waiting for the rest."""

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from django.conf import settings

from config.exceptions import DomainError
from config.threadshare import ShareExceeded

DRAIN_SECONDS = 1.0
READ_PIECE = 64 * 1024


class BodyReadTimeout(DomainError):
    """The body did not arrive in time: 408 REQUEST_TIMEOUT."""

    code = "REQUEST_TIMEOUT"
    status = 408
    title = "Request timeout"

    def __init__(self) -> None:
        super().__init__("The request body did not arrive in time (docs/reference/limits.md).")


class Expires(Protocol):
    """What the watcher shuts down at its deadline: a body's read, or a header phase's."""

    def expire(self) -> None: ...


class _Watcher:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Expires]] = []
        self._cancelled: set[int] = set()
        self._ids = itertools.count()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, guard: Expires) -> int:
        with self._cv:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="body-read-deadlines", daemon=True)
                self._thread.start()
            handle = next(self._ids)
            heapq.heappush(self._heap, (deadline, handle, guard))
            self._cv.notify()
            return handle

    def disarm(self, handle: int) -> None:
        with self._cv:
            self._cancelled.add(handle)

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._heap:
                    self._cv.wait()
                deadline, handle, guard = self._heap[0]
                wait = deadline - time.monotonic()
                if handle in self._cancelled:
                    heapq.heappop(self._heap)
                    self._cancelled.discard(handle)
                    continue
                if wait > 0:
                    self._cv.wait(min(wait, 1.0))
                    continue
                heapq.heappop(self._heap)
            guard.expire()


_watcher = _Watcher()
watcher = _watcher  # also the request line's and headers' deadline (config/headerread.py)


class DeadlineStream:
    """Wraps the request's body stream; reads past the deadline raise BodyReadTimeout."""

    def __init__(
        self,
        stream: BinaryIO,
        sock: socket.socket,
        deadline: float,
        admit: Callable[[], bool] | None = None,
        on_finish: Callable[[], None] | None = None,
    ) -> None:
        self.stream = stream
        self.on_finish = on_finish  # called once, when the body has been read to its end
        self.sock = sock
        self.expired = False
        self.finished = False
        # Asked before the first read and before a drain: may this request wait on its client
        # (config/threadshare.py)? No: the read raises ShareExceeded, the drain is skipped.
        self.admit = admit
        self.admitted = admit is None
        self._lock = threading.Lock()
        self._handle = _watcher.arm(deadline, self)

    def expire(self) -> None:
        with self._lock:
            if self.finished:
                return
            self.expired = True
            with contextlib.suppress(OSError):  # the blocked read returns; the reply still goes out
                self.sock.shutdown(socket.SHUT_RD)

    def _done(self, data: bytes, size: int | None) -> bytes:
        if self.expired:
            raise BodyReadTimeout
        if not data or size is None or size < 0:
            self.finish()
        return data

    def abandon(self, *, drain: bool = True, proxied: bool = False) -> None:
        """The answer is ready. What is left of a body the service did not read (an answer
        given before it was needed: a 401, a batch refused at its 1,001st item) is read and
        dropped for at most DRAIN_SECONDS more, so that a client sending at speed keeps its
        connection and gets its answer cleanly; a slower one has its reading side shut down
        then, and the connection closes after the answer instead of holding a thread.
        Without `drain` (a request refused for its share of the threads) the reading side is shut
        down at once, unless the request came through a trusted proxy (`proxied`): a proxy has
        the whole body and sends it at once, and reads a connection closed on an unread body
        as a failed host (docs/deploy.md, "The load balancer"), so it is drained within the
        same bound."""
        with self._lock:
            unread = not self.finished and not self.expired
        if proxied and unread:
            self.admitted = True
        if unread and (not (drain or proxied) or not self._admitted()):
            self.expire()
        elif unread:
            _watcher.disarm(self._handle)
            self._handle = _watcher.arm(time.monotonic() + DRAIN_SECONDS, self)
            with contextlib.suppress(Exception):
                while self.stream.read(READ_PIECE) and not self.expired:
                    pass
        self.finish()

    def finish(self) -> None:
        with self._lock:
            if self.finished:
                return
            self.finished = True
            _watcher.disarm(self._handle)
        if self.on_finish is not None:
            self.on_finish()

    def admit_now(self) -> bool:
        """Ask for admission before any read; False: the request must be refused."""
        return self._admitted()

    def _admitted(self) -> bool:
        if not self.admitted and self.admit is not None:
            self.admitted = self.admit()
        return self.admitted

    def _admit_or_refuse(self) -> None:
        if not self._admitted():
            self.expire()
            raise ShareExceeded

    def read(self, size: int | None = -1) -> bytes:
        if self.expired:
            raise BodyReadTimeout
        self._admit_or_refuse()
        try:
            data = self.stream.read() if size is None or size < 0 else self.stream.read(size)
        except OSError as exc:
            if self.expired:
                raise BodyReadTimeout from exc
            raise
        return self._done(data, size)

    def readline(self, size: int | None = -1) -> bytes:
        if self.expired:
            raise BodyReadTimeout
        self._admit_or_refuse()
        data = self.stream.readline() if size is None or size < 0 else self.stream.readline(size)
        return self._done(data, size if data.endswith(b"\n") else -1)

    def __getattr__(self, name: str) -> Any:  # Any: the wrapped stream's own attribute
        return getattr(self.stream, name)


def body_guard(
    request: Any,  # Any: Django's request, whose private _stream (a BinaryIO to the stubs) becomes the guard
    *,
    admit: Callable[[], bool] | None = None,
    on_finish: Callable[[], None] | None = None,
) -> DeadlineStream | None:
    """Put the deadline on a request with a body served by gunicorn (the socket is known)."""
    sock = request.META.get("gunicorn.socket")
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if sock is None or length <= 0 or settings.BODY_READ_SECONDS <= 0:
        return None
    deadline = (
        time.monotonic() + settings.BODY_READ_SECONDS + length / settings.BODY_READ_MIN_BYTES_PER_SECOND
    )
    guard = DeadlineStream(request._stream, sock, deadline, admit, on_finish)
    request._stream = guard
    return guard
