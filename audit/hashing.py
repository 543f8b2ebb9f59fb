"""The hash rule of the audit chain, with no Django: the service and the offline verifier
(audit/offline_verify.py) hash an entry with these functions and read exported lines with
`strict_loads`."""

import hashlib
import itertools
import json
from typing import Any


def canonical_json(doc: dict[str, Any]) -> str:
    """Keys sorted, separators `,` and `:`, no whitespace, non-ASCII kept as is."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def entry_hash(doc: dict[str, Any]) -> str:
    """SHA-256 of previous_hash followed by the canonical JSON of the entry without `hash`."""
    body = {k: v for k, v in doc.items() if k != "hash"}
    return hashlib.sha256((doc["previous_hash"] + canonical_json(body)).encode("utf-8")).hexdigest()


# Number fields of a format-1 entry that a client could once send as `-0.0`: such an entry was
# hashed with `-0.0` while the database gives 0.0 back (docs/reference/checkpoints.md, "Negative
# zero in older entries").
ZERO_SIGNED_FIELDS = ("ai_confidence", "review_seconds")


def entry_hash_matches(doc: dict[str, Any]) -> bool:
    """The entry's `hash` is the hash of its content; for an entry whose zero number fields may
    have been hashed as `-0.0`, each such way of writing them is tried (only after the plain
    one failed, so an intact entry costs one hash)."""
    expected = doc.get("hash")
    if not isinstance(expected, str):
        return False
    if entry_hash(doc) == expected:
        return True
    zeros = [name for name in ZERO_SIGNED_FIELDS if isinstance(doc.get(name), float) and doc[name] == 0.0]
    for count in range(1, len(zeros) + 1):
        for names in itertools.combinations(zeros, count):
            if entry_hash({**doc, **dict.fromkeys(names, -0.0)}) == expected:
                return True
    return False


class DuplicateKey(ValueError):
    """An object of the line names a key twice."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        keys = [key for key, _ in pairs]
        raise DuplicateKey(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def strict_loads(text: str) -> Any:
    """A JSON document read as the service reads one: a key given twice in an object raises
    DuplicateKey (which of the two a reader takes is not defined, so the line fails)."""
    return _DECODER.decode(text)
