"""Request bodies for POST /log and POST /calibrate, and an independent re-implementation
of the chain hash (docs/reference/decisions.md) so the tests check the rule, not the service's own function."""

import hashlib
import json
from itertools import count
from typing import Any

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


def recompute_hash(entry: dict[str, Any]) -> str:
    """The chain hash: SHA-256 over previous_hash + canonical JSON (keys sorted, `,`/`:` separators,
    non-ASCII as is) of every shown field except `hash`."""
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
