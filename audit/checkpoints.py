"""Signed checkpoints of each customer's audit tree (docs/reference/checkpoints.md).

`chain_extended` is the one hook of the chain append: it extends the tree with the new
entries inside the append's transaction and, when the chain crosses a multiple of
CHECKPOINT_EVERY, asks a worker (after commit) to sign the tree at that size: an append never
waits for a signature, and a signing key that cannot be read never fails one. Checkpoints are
also made hourly while a chain grows (`checkpoints_make_due`, beat) and on request
(`checkpoint_make`). Each fires `audit.checkpoint`, stored before delivery, so subscribers
keep copies.
"""

import collections
import datetime as dt
import functools
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from audit import checkpoint_key, merkle, note, tree
from audit.exceptions import CheckpointKeyError, TreeNotExtension
from audit.models import AuditEntry, ChainHead, SignedCheckpoint
from config.exceptions import RateLimited
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from keys.models import Customer

logger = logging.getLogger(__name__)

CHECKPOINT_EVERY = 1000
CHECKPOINT_MAX_AGE = dt.timedelta(hours=1)
EVENT_TYPE = "audit.checkpoint"


def _make(customer_id: str, size: int, root: bytes, head_hash: str) -> SignedCheckpoint:
    """Sign and store the checkpoint of the tree at `size` (inside the caller's transaction,
    which holds the chain head lock) and fire the event with it (stored before delivery).
    Refused when the stored tree no longer has the newest checkpoint's root at its size:
    a log never signs a tree that does not extend what it signed before."""
    previous = SignedCheckpoint.objects.filter(customer_id=customer_id).order_by("-sequence").first()
    if previous is not None and tree.root_at(customer_id, previous.sequence).hex() != previous.root_hash:
        raise TreeNotExtension(
            f"The audit tree at size {previous.sequence} no longer matches checkpoint {previous.pk}: "
            "nothing is signed until GET /audit-trail/verify is investigated."
        )
    now = timezone.now()
    text = note.checkpoint_text(
        note.Checkpoint(
            origin=checkpoint_key.origin(customer_id),
            size=size,
            root=root,
            extensions=(f"time {isoformat(now)}",),
        )
    )
    checkpoint = SignedCheckpoint.objects.create(
        customer_id=customer_id,
        sequence=size,
        head_hash=head_hash,
        root_hash=root.hex(),
        note=note.sign(text, checkpoint_key.key_name(), checkpoint_key.signing_key()),
        created_at=now,
    )
    from webhooks.services import event_emit

    event_emit(
        customer=Customer(pk=customer_id),
        type=EVENT_TYPE,
        data={
            "checkpoint_id": checkpoint.pk,
            "sequence": size,
            "head_hash": head_hash,
            "root_hash": checkpoint.root_hash,
            "note": checkpoint.note,
        },
    )
    return checkpoint


def chain_extended(
    *, customer_id: str, start_size: int, entry_hashes: list[str], tree_extended: bool = False
) -> None:
    """The chain of `customer_id` grew from `start_size` by these entries (hex hashes, in
    order): extend the tree (unless the append did, `tree_extended`: audit.tree.APPEND_ONE_SQL)
    and, when a multiple of CHECKPOINT_EVERY was reached or crossed, have a worker sign the tree
    at the append's end once it commits. Called once per append, single or batch, in its
    transaction; it never signs, so it never waits for the key."""
    if not entry_hashes:
        return
    size = start_size + len(entry_hashes)
    if not tree_extended:
        tree.tree_append(customer_id, start_size, entry_hashes, with_root=False)
    if start_size // CHECKPOINT_EVERY != size // CHECKPOINT_EVERY:
        transaction.on_commit(functools.partial(_checkpoint_send, customer_id, size))


def _checkpoint_send(customer_id: str, size: int) -> None:
    from audit.tasks import checkpoint_make_at

    try:
        checkpoint_make_at.delay(customer_id, size)
    except Exception:  # the broker is down: the hourly rule (beat) makes it later
        logger.warning("checkpoint of %s at %s not queued; the hourly rule will make one", customer_id, size)


def checkpoint_make_at(*, customer_id: str, size: int) -> SignedCheckpoint | None:
    """The checkpoint of the tree at exactly `size` (the worker's side of `chain_extended`),
    unless one at that size or later exists. A key that cannot be read, or a tree that does
    not extend the last checkpoint, skips it with an error in the log (checkpoints paused:
    /health says why); the entries are stored either way."""
    if SignedCheckpoint.objects.filter(customer_id=customer_id, sequence__gte=size).exists():
        return None
    head_hash = (
        AuditEntry.objects.filter(customer_id=customer_id, sequence=size)
        .values_list("hash", flat=True)
        .first()
    )
    if head_hash is None:
        return None
    try:
        with transaction.atomic():
            return _make(customer_id, size, tree.root_at(customer_id, size), head_hash)
    except CheckpointKeyError as exc:
        logger.error("checkpoint of %s at %s not signed: %s", customer_id, size, exc.detail)
    except TreeNotExtension:
        logger.error("checkpoint of %s at %s refused: tree does not extend the last one", customer_id, size)
    except IntegrityError:  # made at this size meanwhile (on request)
        pass
    return None


@dataclass
class Made:
    checkpoint: SignedCheckpoint | None
    created: bool


def checkpoint_make(*, customer: Customer, requested: bool = False) -> Made:
    """A checkpoint of the chain as it is now; the latest one when the chain has not grown
    since (or None for an empty chain). A `requested` one (POST /audit-trail/checkpoints) within
    CHECKPOINT_MIN_SECONDS of the newest raises RateLimited: each is signed, stored and sent to
    every subscribed webhook (docs/reference/checkpoints.md, "When checkpoints are made")."""
    with transaction.atomic():
        head = ChainHead.objects.select_for_update().filter(customer=customer).first()
        latest = checkpoint_latest(customer=customer)
        if head is None or head.sequence == 0 or (latest is not None and latest.sequence == head.sequence):
            return Made(latest, created=False)
        if requested and latest is not None:
            wait = latest.created_at + dt.timedelta(seconds=settings.CHECKPOINT_MIN_SECONDS) - timezone.now()
            if wait.total_seconds() > 0:
                raise RateLimited(
                    f"The newest checkpoint (sequence {latest.sequence}) is under "
                    f"{settings.CHECKPOINT_MIN_SECONDS:g} s old: request the next one later; beat signs one "
                    "at least hourly and every 1,000 entries.",
                    retry_after=wait.total_seconds(),
                )
        root = tree.root_at(customer.pk, head.sequence)
        return Made(_make(customer.pk, head.sequence, root, head.head_hash), created=True)


def checkpoints_make_due(*, now: dt.datetime | None = None) -> int:
    """The hourly rule (beat runs it every few minutes): every chain that grew past its
    newest checkpoint gets one when that checkpoint is an hour old or more, or when it has
    none yet. Returns how many were made."""
    now = now or timezone.now()
    newest = SignedCheckpoint.objects.filter(customer=OuterRef("customer")).order_by("-sequence")
    due = (
        ChainHead.objects.filter(sequence__gt=0)
        .annotate(
            signed=Subquery(newest.values("sequence")[:1]),
            signed_at=Subquery(newest.values("created_at")[:1]),
        )
        .filter(Q(signed__isnull=True) | Q(signed__lt=F("sequence")))
        .filter(Q(signed_at__lte=now - CHECKPOINT_MAX_AGE) | Q(signed_at__isnull=True))
        .values_list("customer_id", flat=True)
    )
    made = 0
    for customer_id in list(due):
        if checkpoint_make(customer=Customer(pk=customer_id)).created:
            made += 1
    return made


def checkpoint_latest(*, customer: Customer, at: dt.datetime | None = None) -> SignedCheckpoint | None:
    qs = SignedCheckpoint.objects.filter(customer=customer)
    if at is not None:
        qs = qs.filter(created_at__lte=at)
    return qs.order_by("-sequence").first()


def checkpoint_for_report(*, customer: Customer) -> SignedCheckpoint | None:
    """What a report prints (docs/reference/checkpoints.md, "Reports"): a checkpoint of the chain
    as it is, signed now when the chain grew since the last one (checkpoint_make), else the latest.
    Made before the report verifies the chain, so that verification checks it too and the
    incremental check's point stays valid. When the stored tree no longer extends the last
    checkpoint nothing is signed: the latest is returned, and the verification says what differs."""
    try:
        return checkpoint_make(customer=customer).checkpoint
    except (TreeNotExtension, CheckpointKeyError) as exc:
        logger.error("report checkpoint of %s not signed: %s", customer.pk, type(exc).__name__)
        return checkpoint_latest(customer=customer)


# a checkpoint's document by name, rendered as JSON
def checkpoint_evidence(*, checkpoint: SignedCheckpoint | None) -> JSONObject:
    """What a report prints (docs/reference/checkpoints.md, "Reports"): a checkpoint and the key
    that verifies it; null members when there is none."""
    return {
        "checkpoint_id": checkpoint.pk if checkpoint else None,
        "sequence": checkpoint.sequence if checkpoint else None,
        "root_hash": checkpoint.root_hash if checkpoint else None,
        "head_hash": checkpoint.head_hash if checkpoint else None,
        "created_at": isoformat(checkpoint.created_at) if checkpoint else None,
        "note": checkpoint.note if checkpoint else None,
        "verifier_key": checkpoint_key.verifier_key(),
    }


def checkpoints_list(*, customer: Customer, until: dt.datetime | None = None) -> QuerySet[SignedCheckpoint]:
    """Newest first; with `until`, those made at or before it (the first is the checkpoint of
    that time)."""
    qs = SignedCheckpoint.objects.filter(customer=customer)
    if until is not None:
        qs = qs.filter(created_at__lte=until)
    return qs.order_by("-sequence")


@dataclass
class CheckpointsCheck:
    checked: int
    first_invalid: int | None


class CheckpointWalk:
    """Checks a customer's signed checkpoints while its chain streams past them in sequence
    order (`entry`, fed by the chain verification's own read, so the chain is read once): the
    tree is recomputed from the entries' own hashes (the stored tree rows are not trusted);
    at each checkpoint's size its note must carry a valid signature of this service's key
    over exactly its origin, size and root, and the entry there must have its head hash.

    `edge`: the tree's right edge at a point already checked through; only the checkpoints
    after it are checked. They are listed when the walk starts, before the chain is read, so
    each was made at a size the chain had then reached: one the chain no longer reaches is
    invalid (entries deleted), never a race with an append."""

    def __init__(self, customer: Customer, *, edge: merkle.CompactRange | None = None) -> None:
        self.customer_id = customer.pk
        self.edge = edge or merkle.CompactRange()
        self._verifier = checkpoint_key.verifier()
        self._pending = collections.deque(
            SignedCheckpoint.objects.filter(customer=customer, sequence__gt=self.edge.size)
            .order_by("sequence")
            .values_list("sequence", "head_hash", "root_hash", "note")
        )
        self._checked = 0
        self._invalid: list[int] = []
        self._broken = False

    def entry(self, sequence: int, hash_hex: str) -> None:
        if self._broken:
            return
        if sequence != self.edge.size + 1:  # a gap: no later size can match
            self._broken = True
            return
        self.edge.append(bytes.fromhex(hash_hex))
        while self._pending and self._pending[0][0] == self.edge.size:
            current = self._pending.popleft()
            if not _checkpoint_ok(self.customer_id, current, self.edge.root(), hash_hex, self._verifier):
                self._invalid.append(current[0])
            self._checked += 1

    @property
    def through(self) -> int:
        """The size the walk recomputed the tree to (its edge is the tree's there)."""
        return -1 if self._broken else self.edge.size

    def result(self) -> CheckpointsCheck:
        """The checkpoints walked past, and those at sizes the chain did not reach (invalid)."""
        unreached = [checkpoint[0] for checkpoint in self._pending]
        invalid = self._invalid + unreached
        return CheckpointsCheck(
            checked=self._checked + len(unreached), first_invalid=min(invalid) if invalid else None
        )


def checkpoints_through(*, customer: Customer, sequence: int) -> int:
    """How many signed checkpoints the customer has at sizes up to `sequence`."""
    return SignedCheckpoint.objects.filter(customer=customer, sequence__lte=sequence).count()


def _checkpoint_ok(
    customer_id: str, stored: tuple[int, str, str, str], root: bytes, head_hash: str, verifier: note.Verifier
) -> bool:
    size, stored_head, stored_root, signed = stored
    try:
        body = note.parse_checkpoint(note.open_note(signed, verifier).text)
    except note.NoteError:
        return False
    return (
        body.origin == checkpoint_key.origin(customer_id)
        and body.size == size
        and body.root == root
        and stored_root == root.hex()
        and stored_head == head_hash
    )
