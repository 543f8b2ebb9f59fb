"""The hash rule of the audit chain, with no Django: the service and the offline verifier
(audit/offline_verify.py) hash an entry with these two functions."""

import hashlib
import json
from typing import Any


def canonical_json(doc: dict[str, Any]) -> str:
    """Keys sorted, separators `,` and `:`, no whitespace, non-ASCII kept as is."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def entry_hash(doc: dict[str, Any]) -> str:
    """SHA-256 of previous_hash followed by the canonical JSON of the entry without `hash`."""
    body = {k: v for k, v in doc.items() if k != "hash"}
    return hashlib.sha256((doc["previous_hash"] + canonical_json(body)).encode("utf-8")).hexdigest()
