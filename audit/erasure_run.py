"""What an erasure does to the database (docs/reference/erasure.md, "Erasures"), part by part,
each part in its caller's transaction, locking in the order every writer locks:

1. the erasure's own lock on its target (PostgreSQL advisory lock: erasures of one person run
   one after the other; SQLite serialises every write transaction anyway);
2. the locks a write of the same decisions takes first (each contributor's load, as
   audit.pipeline takes them: the per-decision subgroup locks);
3. the decision rows, FOR UPDATE in key order (as audit.pipeline locks them);
4. the entries' personal part, the decision rows, stored events;
5. each eraser's own rows (per-user aggregates and states, in the order their writers upsert);
6. the chain head, last (the `erasure` entry), as every append takes it.

A batch and an erasure of the same decisions or reviewer therefore wait for each other and
never deadlock."""

import datetime as dt
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import F, Max, Min, Q, QuerySet
from django.utils import timezone

from audit import registry
from audit.apply import entries_append
from audit.erasure_storage import secure_delete_on
from audit.models import AuditEntry, ChainHead, Decision
from audit.models_erasure import ERASED_FINGERPRINT, PSEUDONYM_PREFIX, Erasure
from audit.own_entries import own_entry
from keys.models import Customer
from webhooks.services import event_emit, events_rekey_user

# The entries that snapshot a decision, and so hold its personal fields.
_LOCK_CLASS = 0x65726173  # "eras": the first key of the two-key advisory lock
_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s, hashtext(%s || chr(31) || %s))"


def target_lock(customer_id: str, digest: str) -> None:
    """Hold, until the transaction ends, the lock of one person's erasures (PostgreSQL)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_SQL, [_LOCK_CLASS, customer_id, digest])


def matching(
    customer: Customer, target: str, value: str | None, older_than: dt.datetime | None = None
) -> QuerySet[AuditEntry]:
    """The unerased format-2 entries with a personal part (a salt) an erasure reaches: a
    subject's, a reviewer's, or (a retention run) those logged before `older_than`. Besides a
    decision's entries, another app's entries that name a reviewer (docs/reference/drift.md,
    Erasure); never an entry without a personal part (an erasure entry)."""
    rows = AuditEntry.objects.filter(customer=customer, erased=False, format=2, salt__isnull=False)
    if target == Erasure.Target.RETENTION:
        return rows.filter(logged_at__lt=older_than)
    column = "subject_id" if target == Erasure.Target.SUBJECT_ID else "user_id"
    return rows.filter(**{column: value})


def new_pseudonym() -> str:
    return f"{PSEUDONYM_PREFIX}{secrets.token_hex(4)}"


@dataclass
class Part:
    """What one part of an erasure changed: entries erased (their sequences) and other rows."""

    sequences: list[int]
    rows: int

    @property
    def named_someone(self) -> bool:
        return bool(self.sequences) or self.rows > 0


def _decisions_locked(customer: Customer, pks: Sequence[int]) -> list[tuple[int, str]]:
    """(pk, decision_id) of the decisions, locked as a write of them locks them: each
    contributor's load first (in the order of the contributors), then the rows in key order."""
    found = list(
        Decision.objects.filter(customer=customer, pk__in=list(pks))
        .order_by("pk")
        .values_list("pk", "decision_id")
    )
    ids = sorted({decision_id for _, decision_id in found})
    for contributor in registry.contributors():
        contributor.load(customer_id=customer.pk, decision_ids=ids)
    locked = Decision.objects.select_for_update().filter(customer=customer, pk__in=[pk for pk, _ in found])
    list(locked.order_by("pk").values_list("pk", flat=True))
    return found


def erase_part(
    erasure: Erasure, value: str | None, *, older_than: dt.datetime | None = None, limit: int | None = None
) -> Part:
    """Erase up to `limit` matching entries (all when None), in the caller's transaction, and
    whatever names the person beside them: for a subject or a reviewer, every row that still
    names them, whatever is already erased. Appends the part's `erasure` entry when it changed
    anything (an erasure that names nobody appends none)."""
    customer = erasure.customer
    target = erasure.target
    secure_delete_on()
    found_rows = matching(customer, target, value, older_than).order_by("sequence")
    if limit is not None:
        found_rows = found_rows[:limit]
    found = list(found_rows.values_list("pk", "decision_id"))
    decisions = _decisions_locked(customer, _decisions_naming(customer, target, value, found))
    # Locked now, after the decisions: an erasure of another person that reached the same
    # entries first has erased them, and they are not counted twice.
    still = AuditEntry.objects.select_for_update().filter(pk__in=[pk for pk, _ in found], erased=False)
    entries = list(still.order_by("sequence").values_list("pk", "sequence", "decision_id"))
    AuditEntry.objects.filter(pk__in=[pk for pk, _, _ in entries]).update(
        user_id=None, subject_id=None, context=None, subgroups=None, salt=None, erased=True
    )
    rows = _decisions_erase(customer, target, value, decisions, erasure.pseudonym)
    if target == Erasure.Target.USER_ID:
        rows += events_rekey_user(customer=customer, user_id=value or "", pseudonym=erasure.pseudonym or "")
    rows += _erasers_run(erasure, value, sorted({pk for _, _, pk in entries if pk is not None}), decisions)
    part = Part(sequences=[sequence for _, sequence, _ in entries], rows=rows)
    if part.named_someone:
        erasure.entry_sequence = _append(erasure, part, timezone.now())
    return part


def _decisions_naming(
    customer: Customer, target: str, value: str | None, found: list[tuple[str, int]]
) -> list[int]:
    """The decisions of the entries found and, for a person, every decision row naming them."""
    pks: set[int] = {pk for _, pk in found if pk is not None}
    if target != Erasure.Target.RETENTION:
        column = "user_id" if target == Erasure.Target.USER_ID else "subject_id"
        pks.update(Decision.objects.filter(customer=customer, **{column: value}).values_list("pk", flat=True))
    return sorted(pks)


def _erasers_run(
    erasure: Erasure, value: str | None, erased_pks: list[int], decisions: list[tuple[int, str]]
) -> int:
    """Every registered eraser (registry.register_eraser), with what this part reached; the
    rows they changed."""
    user = erasure.target == Erasure.Target.USER_ID
    span = Decision.objects.filter(pk__in=erased_pks).aggregate(first=Min("timestamp"), last=Max("timestamp"))
    subject_decisions = () if user else tuple(decision_id for _, decision_id in decisions)
    if span["first"] is None and not user and not subject_decisions:
        return 0
    erased = registry.Erased(
        erasure.customer_id,
        value if user else None,
        erasure.pseudonym,
        span["first"],
        span["last"],
        subject_decisions,
    )
    return sum(eraser(erased) or 0 for eraser in registry.erasers())


def _decisions_erase(
    customer: Customer,
    target: str,
    value: str | None,
    decisions: list[tuple[int, str]],
    pseudonym: str | None,
) -> int:
    """The decision rows (current state) lose the erased person's fields: an erased subject's
    subject_id, context and subgroups; an erased reviewer's user_id becomes the pseudonym (their
    figures keep their values) and the context goes. Their replay fingerprints go too (they
    were computed over the personal fields). Returns the rows changed."""
    rows = Decision.objects.filter(customer=customer, pk__in=[pk for pk, _ in decisions])
    if target == Erasure.Target.USER_ID:
        return rows.filter(user_id=value).update(
            user_id=pseudonym, context="", payload_fingerprint=ERASED_FINGERPRINT
        )
    naming = rows.filter(Q(subject_id__isnull=False) | ~Q(context="") | ~Q(subgroups={}))
    return naming.update(subject_id=None, context="", subgroups={}, payload_fingerprint=ERASED_FINGERPRINT)


def _append(erasure: Erasure, part: Part, now: dt.datetime) -> int:
    """The part's `erasure` entry: the erasure's id, the affected sequences as ranges, their
    count and the basis; the chain head (locked last) counts the erased entries."""
    entry = own_entry(
        customer_id=erasure.customer_id,
        type=AuditEntry.Type.ERASURE,
        ref=erasure.pk,
        at=now,
        fields={
            "erasure_id": erasure.pk,
            "legal_basis": erasure.legal_basis,
            "entries": len(part.sequences),
            "sequences": ranges(part.sequences),
        },
    )
    entries_append(erasure.customer_id, [entry], decisions=0)
    if part.sequences:
        ChainHead.objects.filter(customer_id=erasure.customer_id).update(
            erased=F("erased") + len(part.sequences)
        )
    return entry.sequence


def ranges(sequences: Sequence[int]) -> list[list[int]]:
    """Sorted sequences as [first, last] runs."""
    out: list[list[int]] = []
    for sequence in sequences:
        if out and out[-1][1] == sequence - 1:
            out[-1][1] = sequence
        else:
            out.append([sequence, sequence])
    return out


def ranges_merge(first: list[list[int]], second: Sequence[int]) -> list[list[int]]:
    """Two sets of sequences (ranges and a list) as one list of ranges."""
    every = {s for low, high in first for s in range(low, high + 1)}
    every.update(second)
    return ranges(sorted(every))


def completed_event(erasure: Erasure) -> None:
    event_emit(
        customer=erasure.customer,
        type="erasure.completed",
        data={
            "erasure_id": erasure.pk,
            "entries": erasure.entries,
            "sequences": erasure.sequences,
            "legal_basis": erasure.legal_basis,
            "entry_sequence": erasure.entry_sequence,
        },
    )
