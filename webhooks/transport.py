"""Outgoing HTTP for webhooks, SSRF-safe (docs/reference/webhooks.md, "URL safety").

The URL's host is resolved once per attempt, every address is checked, and the connection
is made to the checked address (pinned), with the hostname kept for the Host header and for
TLS SNI and certificate verification: a DNS answer that changes between the check and the
connect (rebinding) cannot redirect the request. Redirects are never followed. A connection
kept alive (webhooks/connections.py) is used again only for the same webhook and the same
address the check of this attempt returned.

Built on the stdlib's http.client rather than urllib3/requests: pinning the address needs a
custom connect(), which http.client exposes as one small override, while urllib3 would need
a pool subclass; we want our own keep-alive rules (per webhook and checked address), at most
one resend (a kept connection closed before any response byte), no redirects, and a bounded
read of the response, which is simplest to guarantee with the bare client."""

import http.client
import socket
import ssl
import time
from dataclasses import dataclass

from webhooks import connections
from webhooks.conf import RESPONSE_BODY_LIMIT
from webhooks.url_safety import Target


@dataclass(frozen=True)
class SendResult:
    ok: bool
    status: int | None
    duration_ms: int
    error: str | None
    body: str


class _Response(http.client.HTTPResponse):
    """Knows whether any byte of the response arrived: a keep-alive connection that the
    receiver closed before answering may be retried, one that started answering may not."""

    def begin(self) -> None:
        if self.headers is None:
            try:
                first = self.fp.peek(1)
            except ConnectionError as exc:
                raise _NothingReceived(reset=True) from exc
            if not first:
                raise _NothingReceived(reset=False)
        super().begin()


class _NothingReceived(Exception):
    """The connection broke before any byte of the response: closed (EOF) or reset."""

    def __init__(self, *, reset: bool) -> None:
        super().__init__("reset" if reset else "closed")
        self.reset = reset


class _PinnedHTTPConnection(http.client.HTTPConnection):
    response_class = _Response

    def __init__(self, host: str, port: int | None, *, timeout: float, address: str) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    response_class = _Response

    def __init__(
        self, host: str, port: int | None, *, timeout: float, address: str, ssl_context: ssl.SSLContext
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl_context)
        self._address = address
        self._ssl_context = ssl_context

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # SNI and certificate verification use the hostname, not the pinned address.
        self.sock = self._ssl_context.wrap_socket(sock, server_hostname=self.host)


_SSL_CONTEXT = ssl.create_default_context()


def _connection(target: Target, timeout: float) -> http.client.HTTPConnection:
    if target.scheme == "https":
        return _PinnedHTTPSConnection(
            target.host, target.port, timeout=timeout, address=target.address, ssl_context=_SSL_CONTEXT
        )
    return _PinnedHTTPConnection(target.host, target.port, timeout=timeout, address=target.address)


@dataclass
class _Exchange:
    status: int | None = None
    text: str = ""
    error: str | None = None
    reusable: bool = False  # the whole response was read and the receiver keeps the connection
    nothing_received: bool = False  # broke before any response byte: safe to send again


def _exchange(
    conn: http.client.HTTPConnection,
    target: Target,
    *,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    deadline: float,
) -> _Exchange:
    """One request and its response on `conn` (new or kept alive), bounded by `deadline`."""
    out = _Exchange()
    conn.timeout = max(0.001, deadline - time.monotonic())
    if conn.sock is not None:
        conn.sock.settimeout(conn.timeout)
    try:
        try:
            conn.request("POST", target.path, body=body, headers=headers)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, ssl.SSLEOFError):
            # the request did not get through whole, so the receiver cannot have acted on it
            out.nothing_received = True
            raise
        if conn.sock is not None:
            conn.sock.settimeout(max(0.001, deadline - time.monotonic()))
        response = conn.getresponse()
        out.status = response.status
        try:
            if conn.sock is not None:
                conn.sock.settimeout(max(0.001, min(1.0, deadline - time.monotonic())))
            out.text = response.read(RESPONSE_BODY_LIMIT).decode("utf-8", errors="replace")
            out.reusable = response.isclosed() and not response.will_close
        except (TimeoutError, OSError, http.client.HTTPException):
            out.text = ""  # the status decides; a slow or broken body is not held against it
        out.error = _response_error(response, deadline=deadline, timeout=timeout)
    except _NothingReceived as exc:
        out.nothing_received = True
        out.error = (
            "connection_reset: the receiver reset the connection"
            if exc.reset
            else "connection_closed: the receiver closed the connection without a response"
        )
    except (http.client.HTTPException, OSError) as exc:
        out.error = _transport_error(exc, timeout=timeout)
    return out


def _response_error(response: http.client.HTTPResponse, *, deadline: float, timeout: float) -> str | None:
    """What makes a response a failed attempt: too late, a redirect (never followed), not 2xx."""
    if time.monotonic() > deadline:
        return f"timeout: no complete response within {timeout:g} s"
    if 300 <= response.status < 400:
        location = response.getheader("Location") or ""
        return f"redirect {response.status} not followed" + (
            f" (Location: {location[:200]})" if location else ""
        )
    if not 200 <= response.status < 300:
        return f"http_status: {response.status}"
    return None


def _transport_error(exc: http.client.HTTPException | OSError, *, timeout: float) -> str:
    """The attempt's error for a failure of the connection itself (the most specific first)."""
    if isinstance(exc, TimeoutError):
        return f"timeout: no response within {timeout:g} s"
    if isinstance(exc, ssl.SSLError):
        return f"tls_error: {exc.reason or type(exc).__name__}"
    if isinstance(exc, ConnectionResetError):
        return "connection_reset: the receiver reset the connection"
    if isinstance(exc, ConnectionRefusedError):
        return "connection_refused: the receiver refused the connection"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "connection_closed: the receiver closed the connection without a response"
    return f"connection_error: {type(exc).__name__}: {str(exc)[:200]}"


def post(
    target: Target,
    *,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    pool: connections.Pool | None = None,
    owner: str = "",
) -> SendResult:
    """One POST; success is a 2xx status line plus headers within `timeout` seconds. Reads at
    most RESPONSE_BODY_LIMIT bytes of the body (what we store), never follows a redirect.

    With a pool, a connection kept alive for the same owner (webhook) and the same checked
    address is used, and kept again when the receiver allows it. If a kept connection breaks
    before any byte of the response (the receiver closed it while idle), the request is sent
    once more on a new connection: the receiver may then see it twice when it had acted on
    the first copy without answering; the webhook-id header lets it tell (at least once)."""
    started = time.monotonic()
    deadline = started + timeout
    key = connections.Key(owner, target.scheme, target.host, target.port, target.address)
    conn = pool.take(key) if pool is not None else None
    reused = conn is not None
    if conn is None:
        conn = _connection(target, timeout)
    out = _exchange(conn, target, body=body, headers=headers, timeout=timeout, deadline=deadline)
    if reused and out.nothing_received and time.monotonic() < deadline:
        conn.close()
        conn = _connection(target, max(0.001, deadline - time.monotonic()))
        out = _exchange(conn, target, body=body, headers=headers, timeout=timeout, deadline=deadline)
    if pool is not None and out.reusable:
        pool.give(key, conn)
    else:
        conn.close()
    duration_ms = int((time.monotonic() - started) * 1000)
    ok = out.error is None and out.status is not None and 200 <= out.status < 300
    return SendResult(ok=ok, status=out.status, duration_ms=duration_ms, error=out.error, body=out.text)
