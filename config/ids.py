"""Opaque, time-sortable identifiers: a type prefix and a ULID (docs/reference/conventions.md,
Identifiers)."""

import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid() -> str:
    """26 Crockford base32 characters: 48 bits of milliseconds, then 80 random bits."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    out = []
    for _ in range(26):
        out.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(out)).lower()


def new_id(prefix: str) -> str:
    return f"{prefix}_{ulid()}"
