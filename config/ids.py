"""Opaque, time-sortable identifiers: a type prefix and a ULID (docs/reference/conventions.md,
Identifiers)."""

import os
import time

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
# Every pair of Crockford characters, indexed by the 10 bits they encode: a ULID is 13 pairs
# (every decision write draws two ids, so this runs per decision of a batch).
_PAIRS = [first + second for first in _CROCKFORD for second in _CROCKFORD]
_SHIFTS = tuple(range(120, -1, -10))


def ulid() -> str:
    """26 Crockford base32 characters: 48 bits of milliseconds, then 80 random bits."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join([_PAIRS[value >> shift & 1023] for shift in _SHIFTS])


def new_id(prefix: str) -> str:
    return f"{prefix}_{ulid()}"
