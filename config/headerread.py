"""A deadline for a request line and its headers, and a client address's bound on the threads
waiting for them (docs/reference/limits.md, "Slow request lines and headers").

gunicorn's threaded worker hands a connection to a thread once its first byte arrives, and the
thread then reads the request line and headers, waiting for the client as long as it likes: 40
connections sending a header line a second held every thread. Installed by gunicorn.conf.py in
each web worker, `install()` wraps the worker's per-connection handler:

- a new connection that has sent nothing yet waits in gunicorn's poller, not in a thread;
- a request whose headers have all arrived is parsed at once and takes no slot (it cannot wait);
- one whose headers are still arriving holds a slot of its client address (the peer address;
  a trusted proxy, which buffers headers itself, is not counted) until the application
  receives the request: over the address's bound (config/threadshare.py) it answers 429 and
  its connection closes;
- the headers must arrive within TRUSTCAL_HEADER_READ_SECONDS of the handler starting: past it
  the reading side is shut down (the watcher of config/bodyread.py) and the request answers
  408 REQUEST_TIMEOUT.

The application ends the header phase (`header_phase_end`, called by the request middleware
first thing): the slot and the deadline are given back; the body has its own
(config/bodyread.py)."""

import contextlib
import ipaddress
import select
import socket
import threading
import time
from collections.abc import Callable
from io import BytesIO
from typing import Protocol

from django.conf import settings

from config.bodyread import watcher
from config.clientaddr import trusted_proxies
from config.threadshare import ADDRESS, share_message, thread_share

_local = threading.local()


# gunicorn's objects as this module uses them (gunicorn ships no types): its gthread connection
# (gunicorn.workers.gthread.TConn), that connection's parser and config, and the worker.
class _Config(Protocol):
    is_ssl: bool


class _Unreader(Protocol):
    buf: BytesIO


class _Parser(Protocol):
    unreader: _Unreader


class _Conn(Protocol):
    cfg: _Config
    parser: _Parser | None
    sock: socket.socket
    client: object  # the peer address as the socket gives it
    initialized: bool
    data_ready: bool


class _Worker(Protocol):
    handle: Callable[[_Conn], object]


class HeaderPhase:
    """One request's header phase: its deadline and, while it waits, its address's slot."""

    def __init__(self, sock: socket.socket, subject: str | None, seconds: float) -> None:
        self.sock = sock
        self.subject = subject
        self.expired = False
        self.ended = False
        self._lock = threading.Lock()
        self._handle = watcher.arm(time.monotonic() + seconds, self) if seconds > 0 else None

    def expire(self) -> None:
        with self._lock:
            if self.ended:
                return
            self.expired = True
            with contextlib.suppress(OSError):  # the blocked read returns; the answer still goes out
                self.sock.shutdown(socket.SHUT_RD)

    def end(self) -> None:
        with self._lock:
            if self.ended:
                return
            self.ended = True
        if self._handle is not None:
            watcher.disarm(self._handle)
        if self.subject is not None:
            thread_share.release(self.subject)


def header_phase_end() -> None:
    """The application has the request: its headers are in."""
    phase: HeaderPhase | None = getattr(_local, "phase", None)
    if phase is not None:
        phase.end()
        _local.phase = None


def _readable_now(sock: socket.socket) -> bool:
    with contextlib.suppress(OSError, ValueError):
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable)
    return True  # let gunicorn find out what is wrong with it


def _headers_in(conn: _Conn) -> bool:
    """Whether the request line and every header have already arrived (so parsing cannot wait)."""
    if conn.cfg.is_ssl:
        return False  # what TLS has received cannot be peeked at
    parser = conn.parser
    buffered = parser.unreader.buf.getvalue() if parser is not None else b""
    try:
        peeked = conn.sock.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        peeked = b""
    except OSError:
        return True  # a broken connection: gunicorn's parser finds out at once
    return b"\r\n\r\n" in buffered + peeked


def _subject(client: object) -> str | None:
    """The peer's address subject, or None for a trusted proxy (or a Unix socket)."""
    host = client[0] if isinstance(client, tuple) and client else None
    if not isinstance(host, str):
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"{ADDRESS}{host}"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in trusted_proxies()):
        return None
    return f"{ADDRESS}{address}"


def _let_go(conn: _Conn) -> bool:
    """Before gunicorn closes a connection: its answer ends (FIN), what the client has already
    sent is read and dropped, and the reading side is shut. gunicorn's graceful close then
    returns at once: it lingers up to 2 s for the client to close, on the worker's main thread,
    where 40 refused connections whose clients kept them open stopped accepting anyone for a
    minute and had the worker killed as unresponsive."""
    sock = conn.sock
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
    if not conn.cfg.is_ssl:
        drained = 0
        with contextlib.suppress(OSError):
            while drained < 65536:
                data = sock.recv(4096, socket.MSG_DONTWAIT)
                if not data:
                    break
                drained += len(data)
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)
    return False


def install(worker: _Worker) -> None:
    """Wrap a gthread worker's handler (its thread pool calls `worker.handle(conn)`)."""
    from gunicorn.workers import gthread

    from config import gunicorn_errors

    original = worker.handle
    defer = getattr(gthread, "_DEFER", None)

    def handle(conn: _Conn) -> object:
        if defer is not None and not conn.initialized and not conn.data_ready:
            if not _readable_now(conn.sock):
                return defer  # nothing sent yet: the poller waits for it, not a thread
            conn.data_ready = True
        subject = None if _headers_in(conn) else _subject(conn.client)
        if subject is not None and not thread_share.take_slot(subject):
            with contextlib.suppress(OSError):
                gunicorn_errors.write_problem(
                    conn.sock, 429, "Too Many Requests", share_message("this client address", subject)
                )
            return _let_go(conn)
        phase = HeaderPhase(conn.sock, subject, float(settings.HEADER_READ_SECONDS))
        _local.phase = phase
        try:
            result = original(conn)
        finally:
            _local.phase = None
            reached = phase.ended
            phase.end()
        if phase.expired and not reached:
            with contextlib.suppress(OSError):
                gunicorn_errors.write_problem(conn.sock, 408, "Request Timeout", "")
            return _let_go(conn)
        return _let_go(conn) if result is False else result

    worker.handle = handle
