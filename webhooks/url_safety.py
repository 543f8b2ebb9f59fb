"""Which webhook URLs may be reached (docs/reference/webhooks.md, "URL safety"): the URL's
syntax, and every address its host resolves to checked against the IANA special-purpose
registries and the operator's settings. `resolve` returns the checked address the transport
(webhooks/transport.py) connects to, so a DNS answer that changes between the check and the
connect cannot redirect the request."""

import ipaddress
import socket
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.clientaddr import Network, parse_networks
from webhooks import conf


class UnsafeUrl(Exception):
    """The URL is refused by the URL rules; the message says why (no secrets in it)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    address: str  # the validated IP to connect to


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
