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
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.clientaddr import Network, parse_networks
from webhooks import conf, connections
from webhooks.conf import RESPONSE_BODY_LIMIT


class UnsafeUrl(Exception):
    """The URL is refused by the URL rules; the message says why (no secrets in it)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    address: str  # the validated IP to connect to


@dataclass(frozen=True)
class SendResult:
    ok: bool
    status: int | None
    duration_ms: int
    error: str | None
    body: str


def _nets(*pairs: tuple[str, str]) -> list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str]]:
    return [(ipaddress.ip_network(net), label) for net, label in pairs]


# The IANA IPv4 and IPv6 Special-Purpose Address Registries, every block marked not globally
# reachable, written out here rather than taken from the `ipaddress` flags, whose tables differ
# between Python patch releases (3.12.1 calls 192.0.0.8 global). Plus multicast, and the
# transition ranges that relay to an embedded IPv4 address (6to4, Teredo, the 6to4 relay anycast),
# refused whole. docs/reference/limits.md, "Webhook URLs".
_REFUSED = _nets(
    ("0.0.0.0/8", "this-network"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignment"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay anycast"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::ffff:0:0/96", "IPv4-mapped"),
    ("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
    ("100::/64", "discard-only"),
    ("100:0:0:1::/64", "dummy prefix"),
    ("2001::/32", "Teredo (2001::/32)"),
    ("2001::/23", "IETF protocol assignment"),
    ("2001:db8::/32", "documentation"),
    ("2002::/16", "6to4 (2002::/16)"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing"),
    ("fc00::/7", "unique-local (private)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local (deprecated)"),
    ("ff00::/8", "multicast"),
)
# Blocks inside the refused ones that the registries mark globally reachable.
_GLOBAL_EXCEPTIONS = [
    ipaddress.ip_network(net)
    for net in (
        "192.0.0.9/32",
        "192.0.0.10/32",
        "2001:1::1/128",
        "2001:1::2/128",
        "2001:1::3/128",
        "2001:3::/32",
        "2001:4:112::/48",
        "2001:20::/28",
        "2001:30::/28",
    )
]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _address_refused(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip in _NAT64:
        # The well-known NAT64 prefix reaches the IPv4 address it embeds: judged by that one.
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        reason = _address_refused(embedded)
        return f"NAT64 of {reason}" if reason else None
    if any(ip in net for net in _GLOBAL_EXCEPTIONS if net.version == ip.version):
        return None
    for net, label in _REFUSED:
        if net.version == ip.version and ip in net:
            return label
    return None


_LOOPBACK: tuple[Network, ...] = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
LINK_LOCAL: tuple[Network, ...] = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))


@dataclass(frozen=True)
class UrlRules:
    """What a webhook URL may be (docs/reference/webhooks.md, "URL safety"): `allow_insecure`
    (WEBHOOK_ALLOW_INSECURE_URLS) admits http and loopback addresses, nothing else;
    `allowed_networks` (WEBHOOK_ALLOWED_NETWORKS) admits the operator's named networks, which
    never include a link-local address (checked when the setting is read). Web hosts and
    workers build it from the same settings (url_rules below)."""

    allow_insecure: bool = False
    allowed_networks: tuple[Network, ...] = ()

    def refusal(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
        """Why this address is refused, or None when a webhook may reach it."""
        reason = _address_refused(ip)
        if reason is None:
            return None
        if any(ip in net for net in LINK_LOCAL if net.version == ip.version):
            return reason
        if self.allow_insecure and any(ip in net for net in _LOOPBACK if net.version == ip.version):
            return None
        if any(ip in net for net in self.allowed_networks if net.version == ip.version):
            return None
        return reason


def url_rules() -> UrlRules:
    """The URL rules of web hosts (create, update) and workers (every attempt) alike."""
    return UrlRules(
        allow_insecure=conf.allow_insecure_urls(),
        allowed_networks=_allowed_networks(tuple(settings.WEBHOOK_ALLOWED_NETWORKS)),
    )


@lru_cache(maxsize=8)
def _allowed_networks(values: tuple[str, ...]) -> tuple[Network, ...]:
    """WEBHOOK_ALLOWED_NETWORKS parsed; a block that overlaps link-local or multicast is a
    failed start: no setting makes a webhook reach a link-local address."""
    networks = parse_networks(values, setting="WEBHOOK_ALLOWED_NETWORKS")
    for network in networks:
        if network.is_multicast or any(_overlaps(network, bad) for bad in LINK_LOCAL):
            raise ImproperlyConfigured(
                f"WEBHOOK_ALLOWED_NETWORKS: {network} overlaps a link-local or multicast block, "
                "which webhooks may never reach"
            )
    return networks


def _overlaps(one: Network, other: Network) -> bool:
    return (
        one.version == other.version
        and int(one.network_address) <= int(other.broadcast_address)
        and int(other.network_address) <= int(one.broadcast_address)
    )


def url_parse(url: str, *, allow_insecure: bool) -> tuple[str, str, int, str]:
    """Syntax rules: scheme, host, port, no credentials. Returns (scheme, host, port, path)."""
    if not isinstance(url, str) or not url or len(url) > 2048 or any(c.isspace() for c in url):
        raise UnsafeUrl("The URL must be a non-empty absolute URL of at most 2048 characters without spaces.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeUrl(f"The URL is malformed: {exc}.")
    scheme = parts.scheme.lower()
    allowed = ("https", "http") if allow_insecure else ("https",)
    if scheme not in allowed:
        raise UnsafeUrl(
            "The URL must use https." if not allow_insecure else "The URL must use http or https."
        )
    if not parts.hostname:
        raise UnsafeUrl("The URL has no host.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl("Credentials in the URL are not supported.")
    if parts.fragment:
        raise UnsafeUrl("The URL must not have a fragment.")
    if port == 0:
        raise UnsafeUrl("The URL's port must be between 1 and 65535.")
    host = parts.hostname.rstrip(".").lower()
    if not host:
        raise UnsafeUrl("The URL has no host.")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return scheme, host, port or (443 if scheme == "https" else 80), path


def resolve(url: str, *, rules: UrlRules) -> Target:
    """Parse, resolve and check every address the host resolves to."""
    scheme, host, port, path = url_parse(url, allow_insecure=rules.allow_insecure)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError) as exc:
        raise UnsafeUrl(f"The host {host!r} does not resolve ({type(exc).__name__}).")
    addresses = []
    for info in infos:
        raw = str(info[4][0])
        ip = ipaddress.ip_address(raw.split("%", 1)[0])
        reason = rules.refusal(ip)
        if reason:
            raise UnsafeUrl(f"The host {host!r} resolves to a {reason} address ({ip}), which is not allowed.")
        addresses.append(str(ip))
    if not addresses:
        raise UnsafeUrl(f"The host {host!r} does not resolve.")
    return Target(scheme=scheme, host=host, port=port, path=path, address=addresses[0])


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

    def __init__(self, *args, address: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    response_class = _Response

    def __init__(self, *args, address: str, ssl_context: ssl.SSLContext, **kwargs) -> None:
        super().__init__(*args, context=ssl_context, **kwargs)
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
