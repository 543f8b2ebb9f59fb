"""GET /audit-trail/verify, incremental (C5): the chain is rechecked from the last verified
checkpoint (sequence and hash, stored), so a call costs what was appended since, not the
whole history; `?full=true` rechecks everything as a job on a worker, one at a time per
customer. Concurrent calls of one customer wait for the one already verifying (a short
cache lock) and then find the checkpoint advanced."""

import dataclasses
import time

from django.core.cache import cache
from django.db import transaction
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


def chain_verify_incremental(customer: Customer) -> tuple[Verification, int]:
    """(the C5 answer, the checkpoint sequence it started after). `entries_checked` counts the
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


def verify_job_start(*, customer: Customer) -> VerifyJob:
    """A full recheck on a worker; while one is queued or running for this customer, that one
    is returned instead of a second."""
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
            return active
        job = VerifyJob.objects.create(customer=customer)
        transaction.on_commit(lambda: _enqueue(job.pk), robust=True)
    return job


def _enqueue(job_id: str) -> None:
    from audit.tasks import verify_job_run

    verify_job_run.delay(job_id)


def verify_job_run(*, job_id: str) -> None:
    taken = VerifyJob.objects.filter(pk=job_id, status=VerifyJob.Status.QUEUED).update(
        status=VerifyJob.Status.RUNNING
    )
    if not taken:
        return
    job = VerifyJob.objects.select_related("customer").get(pk=job_id)
    try:
        result = with_checkpoints(selectors.chain_verify(job.customer), job.customer)
    except Exception:
        VerifyJob.objects.filter(pk=job_id).update(
            status=VerifyJob.Status.FAILED, completed_at=timezone.now()
        )
        raise
    if result.first_invalid_sequence is None:
        _checkpoint_advance(job.customer, result, result.entries_checked)
    VerifyJob.objects.filter(pk=job_id).update(
        status=VerifyJob.Status.COMPLETED, result=result.as_dict(), completed_at=timezone.now()
    )


def verify_job_get(*, customer: Customer, job_id: str) -> VerifyJob:
    job = VerifyJob.objects.filter(customer=customer, pk=job_id).first()
    if job is None:
        raise VerifyJobNotFound(f"No verification job {job_id}.")
    return job
