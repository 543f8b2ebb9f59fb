"""Tampering as an operator with database access could do it, for the tests that show it is
caught."""

import json

import rfc8785

from audit import tree
from audit.chain import entry_document
from audit.hashing import canonical_hash, entry_hash
from audit.models import AuditEntry, ChainHead, Decision


def rehash(entry: AuditEntry, previous: str, changes: dict | None = None) -> None:
    """Give the entry (not saved) `previous` as its previous_hash, apply `changes` to its
    hashed fields and recompute its hash, as the service would have (either format)."""
    entry.previous_hash = previous
    for name, value in (changes or {}).items():
        setattr(entry, name, value)
    if entry.format == 2:
        inner = json.loads(entry.canonical)
        inner.update(changes or {}, previous_hash=previous)
        entry.canonical = rfc8785.dumps(inner).decode()
        entry.hash = canonical_hash(entry.canonical)
    else:
        entry.hash = entry_hash(entry_document(entry))


def rewrite_chain(customer_id: str, *, from_sequence: int) -> None:
    """The operator's perfect rewrite: the decision of entry `from_sequence` changed (approve
    to deny), every hash from there recomputed, the decision row and the chain head changed to
    match, the stored tree rebuilt. The chain alone then verifies; only checkpoints signed
    before the rewrite tell."""
    entries = list(AuditEntry.objects.filter(customer_id=customer_id).order_by("sequence"))
    changed = entries[from_sequence - 1]
    Decision.objects.filter(pk=changed.decision_id).update(user_decision="deny")
    previous = entries[from_sequence - 2].hash if from_sequence > 1 else changed.previous_hash
    for entry in entries[from_sequence - 1 :]:
        changes = {"user_decision": "deny", "followed_ai": False} if entry.sequence == from_sequence else {}
        rehash(entry, previous, changes)
        previous = entry.hash
        entry.save()
    ChainHead.objects.filter(customer_id=customer_id).update(head_hash=previous)
    tree.tree_rebuild(customer_id, len(entries))
