"""GET /audit-trail/verify, incremental: the chain is rechecked from the point it was last
checked through (sequence and hash, the Merkle tree's right edge there and the signed
checkpoints verified up to it, stored), entries and signed checkpoints in one read of what
was appended since, so a call costs what was appended since, not the whole history;
`?full=true` rechecks everything as a job on a worker, one at a time per customer, and beat
runs that full check on every chain daily. A check that finds the chain or a checkpoint
invalid deletes the point, so every later call rechecks from the start and answers invalid
too: no answer is `valid` for a range that was not checked (docs/reference/limits.md, "Chain
verification"). Concurrent calls of one customer wait for the one already verifying (a short
cache lock) and then find the point advanced."""

import dataclasses
import datetime as dt
import functools
import time

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from audit import merkle, selectors
from audit.checkpoints import CheckpointWalk, checkpoints_through
from audit.exceptions import VerifyJobNotFound
from audit.models import GENESIS_HASH, ChainCheckpoint, VerifyJob
from audit.selectors import Verification
from config.jsondoc import JSONObject
from keys.models import Customer

LOCK_SECONDS = 120
LOCK_WAIT_SECONDS = 30.0


@dataclasses.dataclass(frozen=True)
class Point:
    """Where a chain was checked through: entries 1..sequence (the last one's hash), the
    tree's right edge there (one subtree hash per bit of sequence), and how many signed
    checkpoints at sizes up to it were verified."""

    sequence: int = 0
    head_hash: str = GENESIS_HASH
    peaks: tuple[bytes, ...] = ()
    checkpoints: int = 0
    verified_at: dt.datetime | None = None

    def edge(self) -> merkle.CompactRange:
        return merkle.CompactRange(self.sequence, list(self.peaks))


ORIGIN = Point()
Stored = tuple[int, str] | None  # the stored point's (sequence, hash) a check started from


def _point_read(customer: Customer) -> tuple[Point, Stored]:
    """The stored point, or the origin when there is none or it cannot be continued from: its
    edge does not fit its size (a point kept before the edge was), or the signed checkpoints
    at sizes up to it are not the ones its checks verified (one was added or deleted behind
    it)."""
    row = (
        ChainCheckpoint.objects.filter(customer=customer)
        .values_list("sequence", "head_hash", "tree_edge", "checkpoints_checked", "verified_at")
        .first()
    )
    if row is None:
        return ORIGIN, None
    sequence, head_hash, edge, counted, verified_at = row
    edge = bytes(edge)
    stored = (sequence, head_hash)
    if len(edge) != 32 * sequence.bit_count() or counted != checkpoints_through(
        customer=customer, sequence=sequence
    ):
        return ORIGIN, stored
    peaks = tuple(edge[at : at + 32] for at in range(0, len(edge), 32))
    return Point(sequence, head_hash, peaks, counted, verified_at), stored


def _check_from(customer: Customer, point: Point) -> tuple[Verification, Point | None]:
    """The entries and the signed checkpoints after `point`, in one read of the chain. The
    answer covers the whole chain (the point's prefix and this read); the point this check
    reached is returned when everything after the old one checked out, else None."""
    walk = CheckpointWalk(customer, edge=point.edge())
    chain = selectors.chain_verify(
        customer, after_sequence=point.sequence, after_hash=point.head_hash, on_entry=walk.entry
    )
    check = walk.result()
    reached = point.sequence + chain.entries_checked
    answer = Verification(
        valid=chain.valid and check.first_invalid is None,
        entries_checked=reached,
        head_hash=chain.head_hash,
        first_invalid_sequence=chain.first_invalid_sequence,
        checkpoints_checked=point.checkpoints + check.checked,
        first_invalid_checkpoint=check.first_invalid,
        erased_entries=chain.erased_entries,
    )
    if not answer.valid or walk.through != reached:
        return answer, None
    peaks = tuple(value for _, _, value in walk.edge.peaks)
    return answer, Point(reached, chain.head_hash, peaks, answer.checkpoints_checked)


ANYWHERE = (-1, "")  # a full check stores its point whatever point was stored


def _conclude(customer: Customer, reached: Point | None, *, started: Stored) -> None:
    """Store the point a check reached, or delete the stored one when the check found
    something invalid. An incremental check advances only the point it started from (a full
    check that cleared it meanwhile is not undone), and not past a signed checkpoint that was
    made while it read the chain (it did not check that one; the next call does)."""
    if reached is None:
        ChainCheckpoint.objects.filter(customer=customer).delete()
        return
    if checkpoints_through(customer=customer, sequence=reached.sequence) != reached.checkpoints:
        return
    values = {
        "sequence": reached.sequence,
        "head_hash": reached.head_hash,
        "tree_edge": b"".join(reached.peaks),
        "checkpoints_checked": reached.checkpoints,
        "verified_at": timezone.now(),
    }
    if started is ANYWHERE:
        ChainCheckpoint.objects.update_or_create(customer=customer, defaults=values)
    elif started is None:
        try:
            with transaction.atomic():
                ChainCheckpoint.objects.create(customer=customer, **values)
        except IntegrityError:  # another check stored one meanwhile
            pass
    else:
        ChainCheckpoint.objects.filter(customer=customer, sequence=started[0], head_hash=started[1]).update(
            **values
        )


def _incremental(customer: Customer) -> tuple[Verification, Point]:
    lock = f"trustcal:audit:verify:{customer.pk}"
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    acquired = cache.add(lock, 1, LOCK_SECONDS)
    while not acquired and time.monotonic() < deadline:
        time.sleep(0.05)
        acquired = cache.add(lock, 1, LOCK_SECONDS)
    try:
        point, stored = _point_read(customer)
        answer, reached = _check_from(customer, point)
        if reached is None or reached.sequence != point.sequence:
            _conclude(customer, reached, started=stored)
    finally:
        if acquired:
            cache.delete(lock)
    return answer, point


# the verification's document by name, rendered as JSON
def chain_verify_covered(customer: Customer) -> JSONObject:
    """The incremental answer for a report, with the sequence range it covers: entries
    `rechecked_from_sequence`..`to_sequence` rechecked now, 1..`verified_through_sequence` by
    an earlier check at `earlier_check_at` (a check that fails clears that)."""
    result, point = _incremental(customer)
    earlier = point.verified_at
    return {
        **result.as_dict(),
        "covered": {
            "from_sequence": 1 if result.entries_checked else None,
            "to_sequence": result.entries_checked or None,
            "rechecked_from_sequence": point.sequence + 1,
            "verified_through_sequence": point.sequence,
            "earlier_check_at": earlier.isoformat().replace("+00:00", "Z")
            if point.sequence and earlier
            else None,
        },
    }


def chain_verify_incremental(customer: Customer) -> tuple[Verification, int]:
    """(the verify answer that docs/reference/decisions.md describes; the sequence this
    call's recheck started after). `entries_checked` and `checkpoints_checked` count the whole
    verified chain: the point's prefix plus what was rechecked now."""
    answer, point = _incremental(customer)
    return answer, point.sequence


QUEUED_RESEND_SECONDS = 60  # a queued job nobody took for this long lost its message


def _lease_end() -> dt.datetime:
    return timezone.now() + dt.timedelta(seconds=settings.VERIFY_LEASE_SECONDS)


def verify_job_start(*, customer: Customer) -> VerifyJob:
    """A full recheck on a worker; while one is queued or running for this customer, that one
    is returned instead of a second (and sent again at once when its worker or its message was
    lost, so a stuck job never answers for ever)."""
    now = timezone.now()
    with transaction.atomic():
        Customer.objects.select_for_update().filter(pk=customer.pk).exists()
        active = (
            VerifyJob.objects.filter(
                customer=customer, status__in=[VerifyJob.Status.QUEUED, VerifyJob.Status.RUNNING]
            )
            .order_by("created_at")
            .first()
        )
        if active is not None:
            if active.lease_until is not None and active.lease_until < now:
                _requeue([active.pk], now)
                active.refresh_from_db()
            return active
        job = VerifyJob.objects.create(
            customer=customer, lease_until=now + dt.timedelta(seconds=QUEUED_RESEND_SECONDS)
        )
        transaction.on_commit(lambda: _enqueue(job.pk), robust=True)
    return job


def _enqueue(job_id: str) -> None:
    from audit.tasks import verify_job_run

    verify_job_run.delay(job_id)


def _requeue(ids: list[str], now: dt.datetime) -> None:
    """Queue again (and send) jobs whose worker died or whose message was lost; one that has
    run VERIFY_MAX_ATTEMPTS times is failed instead."""
    VerifyJob.objects.filter(pk__in=ids, attempts__gte=settings.VERIFY_MAX_ATTEMPTS).filter(
        status__in=[VerifyJob.Status.QUEUED, VerifyJob.Status.RUNNING]
    ).update(status=VerifyJob.Status.FAILED, completed_at=now, lease_until=None)
    again = list(
        VerifyJob.objects.filter(
            pk__in=ids,
            status__in=[VerifyJob.Status.QUEUED, VerifyJob.Status.RUNNING],
            attempts__lt=settings.VERIFY_MAX_ATTEMPTS,
        ).values_list("pk", flat=True)
    )
    VerifyJob.objects.filter(pk__in=again).update(
        status=VerifyJob.Status.QUEUED, lease_until=now + dt.timedelta(seconds=QUEUED_RESEND_SECONDS)
    )
    for job_id in again:
        transaction.on_commit(functools.partial(_enqueue, job_id), robust=True)


def verify_jobs_recover() -> int:
    """Beat: verification jobs whose worker died (running, lease expired) or whose message was
    lost (queued, not taken a minute after it was sent) are sent again."""
    now = timezone.now()
    with transaction.atomic():
        ids = list(
            VerifyJob.objects.filter(
                status__in=[VerifyJob.Status.QUEUED, VerifyJob.Status.RUNNING], lease_until__lt=now
            ).values_list("pk", flat=True)[:100]
        )
        if ids:
            _requeue(ids, now)
    return len(ids)


def verify_full_due() -> int:
    """Beat, daily: a full check of every customer's chain, so that an entry edited before the
    checked-through point is found within a day, and the point cleared (see the module's doc)."""
    started = 0
    for customer in Customer.objects.filter(chain_head__isnull=False).order_by("pk").iterator():
        verify_job_start(customer=customer)
        started += 1
    return started


def _claim(job_id: str) -> int | None:
    now = timezone.now()
    with transaction.atomic():
        taken = (
            VerifyJob.objects.filter(pk=job_id, attempts__lt=settings.VERIFY_MAX_ATTEMPTS)
            .filter(
                Q(status=VerifyJob.Status.QUEUED) | Q(status=VerifyJob.Status.RUNNING, lease_until__lt=now)
            )
            .update(status=VerifyJob.Status.RUNNING, attempts=F("attempts") + 1, lease_until=_lease_end())
        )
        if not taken:
            return None
        return VerifyJob.objects.filter(pk=job_id).values_list("attempts", flat=True).get()


def verify_job_run(*, job_id: str) -> None:
    """Claim the job (lease and attempt), check the whole chain and every signed checkpoint,
    and complete it; only the holder of the current attempt completes it. A chain found
    invalid loses its checked-through point."""
    attempt = _claim(job_id)
    if attempt is None:
        return
    job = VerifyJob.objects.select_related("customer").get(pk=job_id)
    mine = VerifyJob.objects.filter(pk=job_id, status=VerifyJob.Status.RUNNING, attempts=attempt)
    try:
        result, reached = _check_from(job.customer, ORIGIN)
    except Exception:
        mine.update(status=VerifyJob.Status.FAILED, completed_at=timezone.now(), lease_until=None)
        raise
    with transaction.atomic():
        _conclude(job.customer, reached, started=ANYWHERE)
        mine.update(
            status=VerifyJob.Status.COMPLETED,
            result=result.as_dict(),
            completed_at=timezone.now(),
            lease_until=None,
        )


def verify_job_get(*, customer: Customer, job_id: str) -> VerifyJob:
    job = VerifyJob.objects.filter(customer=customer, pk=job_id).first()
    if job is None:
        raise VerifyJobNotFound(f"No verification job {job_id}.")
    return job
