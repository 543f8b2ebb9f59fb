"""GET /audit-trail/verify, incremental: the chain is rechecked from the last verified
checkpoint (sequence and hash, stored), so a call costs what was appended since, not the
whole history; `?full=true` rechecks everything as a job on a worker, one at a time per
customer, and beat runs that full check on every chain daily. A full check that finds the
chain invalid deletes the checkpoint, so every later call rechecks from the start and answers
invalid too: no answer is `valid` for a chain a full check found invalid (docs/reference/
limits.md, "Chain verification"). Concurrent calls of one customer wait for the one already
verifying (a short cache lock) and then find the checkpoint advanced."""

import dataclasses
import datetime as dt
import functools
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from audit import selectors
from audit.checkpoints import checkpoints_check
from audit.exceptions import VerifyJobNotFound
from audit.models import GENESIS_HASH, ChainCheckpoint, VerifyJob
from audit.selectors import Verification
from keys.models import Customer

LOCK_SECONDS = 120
LOCK_WAIT_SECONDS = 30.0


def _checkpoint_advance(customer: Customer, result: Verification, sequence: int) -> None:
    ChainCheckpoint.objects.update_or_create(
        customer=customer,
        defaults={"sequence": sequence, "head_hash": result.head_hash, "verified_at": timezone.now()},
    )


def chain_verify_covered(customer: Customer) -> dict[str, Any]:
    """The incremental answer for a report, with the sequence range it covers: entries
    `rechecked_from_sequence`..`to_sequence` rechecked now, 1..`verified_through_sequence` by
    an earlier check at `earlier_check_at` (a full check clears that when it fails)."""
    earlier = ChainCheckpoint.objects.filter(customer=customer).values_list("verified_at", flat=True).first()
    result, start = chain_verify_incremental(customer)
    return {
        **result.as_dict(),
        "covered": {
            "from_sequence": 1 if result.entries_checked else None,
            "to_sequence": result.entries_checked or None,
            "rechecked_from_sequence": start + 1,
            "verified_through_sequence": start,
            "earlier_check_at": earlier.isoformat().replace("+00:00", "Z") if start and earlier else None,
        },
    }


def chain_verify_incremental(customer: Customer) -> tuple[Verification, int]:
    """(the verify answer of docs/reference/decisions.md and the checkpoint sequence it started after). `entries_checked` counts the
    whole verified chain: the checkpoint's prefix plus the entries rechecked now."""
    lock = f"trustcal:audit:verify:{customer.pk}"
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    acquired = cache.add(lock, 1, LOCK_SECONDS)
    while not acquired and time.monotonic() < deadline:
        time.sleep(0.05)
        acquired = cache.add(lock, 1, LOCK_SECONDS)
    try:
        point = ChainCheckpoint.objects.filter(customer=customer).values_list("sequence", "head_hash").first()
        start, start_hash = point if point is not None else (0, GENESIS_HASH)
        result = selectors.chain_verify(customer, after_sequence=start, after_hash=start_hash)
        reached = start + result.entries_checked
        if result.valid and reached != start:
            _checkpoint_advance(customer, result, reached)
    finally:
        if acquired:
            cache.delete(lock)
    answer = Verification(
        valid=result.valid,
        entries_checked=reached,
        head_hash=result.head_hash,
        first_invalid_sequence=result.first_invalid_sequence,
    )
    return with_checkpoints(answer, customer), start


def with_checkpoints(result: Verification, customer: Customer) -> Verification:
    """The chain's answer with every signed checkpoint checked against it: a chain that
    does not reproduce a checkpoint it once signed is not valid."""
    check = checkpoints_check(customer=customer)
    return dataclasses.replace(
        result,
        valid=result.valid and check.first_invalid is None,
        checkpoints_checked=check.checked,
        first_invalid_checkpoint=check.first_invalid,
    )


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
    checkpoint is found within a day, and the checkpoint cleared (see the module's doc)."""
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
    """Claim the job (lease and attempt), check the whole chain, and complete it; only the
    holder of the current attempt completes it. A chain found invalid loses its checkpoint."""
    attempt = _claim(job_id)
    if attempt is None:
        return
    job = VerifyJob.objects.select_related("customer").get(pk=job_id)
    mine = VerifyJob.objects.filter(pk=job_id, status=VerifyJob.Status.RUNNING, attempts=attempt)
    try:
        result = with_checkpoints(selectors.chain_verify(job.customer), job.customer)
    except Exception:
        mine.update(status=VerifyJob.Status.FAILED, completed_at=timezone.now(), lease_until=None)
        raise
    with transaction.atomic():
        if result.first_invalid_sequence is None and result.valid:
            _checkpoint_advance(job.customer, result, result.entries_checked)
        else:
            ChainCheckpoint.objects.filter(customer=job.customer).delete()
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
