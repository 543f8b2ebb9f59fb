"""An entry that records no decision (an erasure, a change of the retention policy or of the
settings the figures rest on, another app's record such as a drift monitor's): format 2, its
fields in clear, and a personal part only when it names a reviewer (docs/reference/erasure.md,
"Entry format 2"); and the chain head's lock its writers take."""

import datetime as dt

from audit.chain import entry_seal
from audit.models import AuditEntry, ChainHead
from config.jsondoc import JSONObject
from config.timeutils import isoformat


# the entry's own fields by name, JSON values of several types
def own_entry(
    *,
    customer_id: str,
    type: str,
    ref: str,
    at: dt.datetime,
    fields: JSONObject,
    user_id: str | None = None,
    context: str | None = None,
    personal: bool = False,
) -> AuditEntry:
    """A sealed, unsaved entry of `type` at `at`: its canonical text holds entry_id, type,
    logged_at and `fields`; `ref` is stored as its decision_ref (what the chain's index finds it
    by). With `personal`, a personal part commits to `user_id` and `context` (subgroups `{}` and
    subject_id null, as the verifiers read every entry's personal part)."""
    entry = AuditEntry(
        customer_id=customer_id,
        decision=None,
        type=type,
        decision_ref=ref,
        timestamp=at,
        logged_at=at,
        user_id=user_id,
        context=context,
        subgroups=None,
        subject_id=None,
        ai_recommendation="",
        user_decision="",
        followed_ai=False,
        calibration_category="",
    )
    clear = {"entry_id": entry.id, "type": str(type), "logged_at": isoformat(at), **fields}
    committed: dict[str, object] = {
        "context": context,
        "subgroups": {},
        "subject_id": None,
        "user_id": user_id,
    }
    entry_seal(entry, clear=clear, personal=committed if personal else None)
    return entry


def chain_lock(customer_id: str) -> None:
    """Lock the customer's chain head (until the transaction ends) before the caller reads and
    changes rows that the decision pipeline changes after its own append, under that lock (the
    drift monitors' state): every such writer then holds the head first, in one order."""
    ChainHead.objects.bulk_create([ChainHead(customer_id=customer_id)], ignore_conflicts=True)
    list(ChainHead.objects.select_for_update().filter(customer_id=customer_id).values_list("pk"))
