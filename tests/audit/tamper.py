"""Tampering as an operator with database access could do it, for the tests that show it is
caught."""

from audit import tree
from audit.chain import entry_document, entry_hash
from audit.models import AuditEntry, ChainHead, Decision


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
        if entry.sequence == from_sequence:
            entry.user_decision = "deny"
            entry.followed_ai = False
        entry.previous_hash = previous
        entry.hash = entry_hash(entry_document(entry))
        previous = entry.hash
        entry.save()
    ChainHead.objects.filter(customer_id=customer_id).update(head_hash=previous)
    tree.tree_rebuild(customer_id, len(entries))
