"""The client address of a request (docs/reference/access.md, "Client address"): REMOTE_ADDR,
or, when REMOTE_ADDR is one of the trusted proxies (`TRUSTCAL_TRUSTED_PROXIES`), the right-most
address of X-Forwarded-For that is not a trusted proxy. Only the entries a trusted proxy
appended are believed: whatever a client writes into X-Forwarded-For itself lies to the left of
them and is never reached, so a client cannot choose the address it is counted under."""

import ipaddress
from collections.abc import Iterable, Mapping
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_FORWARDED_HOPS = 32  # a longer header is a client's invention; its left part is never needed


def parse_networks(values: Iterable[str], *, setting: str) -> tuple[Network, ...]:
    """CIDR blocks or single addresses, as a setting lists them; a bad entry is a failed start."""
    networks = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{setting}: {text!r} is not an address or a CIDR block") from exc
    return tuple(networks)


@lru_cache(maxsize=8)
def _trusted(values: tuple[str, ...]) -> tuple[Network, ...]:
    return parse_networks(values, setting="TRUSTCAL_TRUSTED_PROXIES")


def trusted_proxies() -> tuple[Network, ...]:
    return _trusted(tuple(settings.TRUSTED_PROXIES))


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_trusted(address: Address | None, proxies: tuple[Network, ...]) -> bool:
    return address is not None and any(address in network for network in proxies)


def from_trusted_proxy(meta: Mapping[str, object]) -> bool:
    """Did one of the trusted proxies send this request (REMOTE_ADDR is one of them)?"""
    proxies = trusted_proxies()
    return bool(proxies) and _is_trusted(_address(str(meta.get("REMOTE_ADDR") or "")), proxies)


def client_address(meta: Mapping[str, object]) -> str:
    remote_text = str(meta.get("REMOTE_ADDR") or "")
    remote = _address(remote_text)
    proxies = trusted_proxies()
    if not proxies or not _is_trusted(remote, proxies):
        return str(remote) if remote is not None else (remote_text[:64] or "unknown")
    hops = [hop for hop in str(meta.get("HTTP_X_FORWARDED_FOR") or "").split(",") if hop.strip()]
    client = remote
    for hop in reversed(hops[-MAX_FORWARDED_HOPS:]):
        address = _address(hop)
        if address is None:
            # Not an address: the proxy before it did not write it. The last good one counts.
            break
        client = address
        if not _is_trusted(address, proxies):
            break
    return str(client)
