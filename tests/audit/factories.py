"""Request bodies for POST /log and POST /calibrate, and an independent re-implementation
of the chain hash (docs/reference/decisions.md) so the tests check the rule, not the service's own function."""

import hashlib
import hmac
import json
from itertools import count
from typing import Any

import rfc8785

_ids = count(1)


def decision_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "decision_id": f"d-{next(_ids)}",
        "user_id": "alice",
        "model_id": "credit-v1",
        "model_version": "1.0",
        "ai_recommendation": "approve",
        "ai_confidence": 0.7,
        "user_decision": "approve",
        "context": "loan application 42",
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}


PERSONAL = ("context", "subgroups", "subject_id", "user_id")


def recompute_hash(entry: dict[str, Any]) -> str:
    """The chain hash, from the shown entry alone.

    Format 1: SHA-256 over previous_hash + canonical JSON (keys sorted, `,`/`:` separators,
    non-ASCII as is) of every shown field except `hash`.
    Format 2 (docs/reference/erasure.md): SHA-256 of `canonical`, which must be the RFC 8785
    form (by the rfc8785 package) of the shown fields that are not personal plus `personal`,
    HMAC-SHA256 keyed by the salt over the RFC 8785 form of personal_fields (unless erased).
    A mismatch anywhere answers a hash that cannot match."""
    if entry.get("format") == 2:
        inner = json.loads(entry["canonical"])
        shown = {
            k: v
            for k, v in entry.items()
            if k not in {"hash", "canonical", "personal_fields", "salt", "erased", *PERSONAL}
        }
        if rfc8785.dumps(shown).decode() != entry["canonical"] or inner != shown:
            return "canonical is not the shown fields"
        if not entry.get("erased") and "personal" in inner:
            mac = hmac.new(
                bytes.fromhex(entry["salt"]), rfc8785.dumps(entry["personal_fields"]), hashlib.sha256
            )
            if mac.hexdigest() != inner["personal"] or any(
                entry[k] != entry["personal_fields"][k] for k in PERSONAL
            ):
                return "personal fields do not match"
        return hashlib.sha256(entry["canonical"].encode("utf-8")).hexdigest()
    doc = {k: v for k, v in entry.items() if k != "hash"}
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((entry["previous_hash"] + canonical).encode("utf-8")).hexdigest()


def all_entries(api, **params: Any) -> list[dict[str, Any]]:
    """Every entry of the trail, oldest first, through the paged list."""
    out: list[dict[str, Any]] = []
    page = 1
    while True:
        body = api.get("/v1/audit-trail", {**params, "page": page, "limit": 100}).json()
        out.extend(body["data"])
        if not body["pagination"]["has_more"]:
            return sorted(out, key=lambda e: e["sequence"])
        page += 1
