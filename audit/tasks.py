"""Thin Celery tasks for the audit trail."""

from celery import shared_task

from audit import checkpoints, verify


@shared_task(name="audit.tasks.verify_job_run", ignore_result=True)
def verify_job_run(job_id: str) -> None:
    """GET /audit-trail/verify?full=true: the whole chain, rechecked on a worker."""
    verify.verify_job_run(job_id=job_id)


@shared_task(name="audit.tasks.checkpoints_make_due", ignore_result=True)
def checkpoints_make_due() -> None:
    """Beat: the hourly checkpoint of every chain that grew (docs/reference/checkpoints.md)."""
    checkpoints.checkpoints_make_due()


@shared_task(name="audit.tasks.checkpoint_make_at", ignore_result=True)
def checkpoint_make_at(customer_id: str, size: int) -> None:
    """A chain reached a multiple of 1,000 entries: sign its tree at that size."""
    checkpoints.checkpoint_make_at(customer_id=customer_id, size=size)


@shared_task(name="audit.tasks.verify_jobs_recover", ignore_result=True)
def verify_jobs_recover() -> int:
    """Beat, every 30 s: full checks whose worker died or whose message was lost."""
    return verify.verify_jobs_recover()


@shared_task(name="audit.tasks.verify_full_due", ignore_result=True)
def verify_full_due() -> int:
    """Beat, daily: a full check of every chain."""
    return verify.verify_full_due()


@shared_task(name="audit.tasks.erasures_run_due", ignore_result=True)
def erasures_run_due() -> int:
    """Beat, hourly: scheduled erasures that came due, and each customer's retention run
    (personal data older than its max_days; docs/reference/erasure.md)."""
    from audit import erasure

    return erasure.erasures_run_due()


@shared_task(name="audit.tasks.erasure_continue", ignore_result=True, acks_late=True)
def erasure_continue(erasure_id: str) -> None:
    """POST /erasures that reaches more entries than a web request erases: its parts, on a
    worker (docs/reference/erasure.md)."""
    from audit import erasure

    erasure.erasure_continue(erasure_id=erasure_id)


@shared_task(name="audit.tasks.erasures_running_resume", ignore_result=True)
def erasures_running_resume() -> int:
    """Beat, every minute: running erasures whose worker died or whose message was lost."""
    from audit import erasure

    return erasure.erasures_running_resume()


@shared_task(name="audit.tasks.erasure_vacuum", ignore_result=True)
def erasure_vacuum() -> None:
    """After an erasure on PostgreSQL: the touched tables' dead rows (the erased values) go."""
    from audit import erasure_storage

    erasure_storage.tables_vacuum()
