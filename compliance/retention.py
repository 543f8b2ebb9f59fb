"""What is kept of finished exports (docs/reference/reports.md, docs/reference/limits.md,
"Exports"): a customer's completed files within EXPORT_STORAGE_QUOTA_MB, every finished job for
EXPORT_RETENTION_DAYS, and the deletion of a job with its file."""

import datetime as dt
import logging

from django.conf import settings
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from compliance.models import ExportJob

logger = logging.getLogger("trustcal.compliance")


def exports_storage() -> Storage:
    return storages["exports"]


def exports_delete(jobs: list[tuple[str, str]]) -> None:
    """Delete the export jobs (pk, file name), then (after commit) their files; a file already
    gone is fine."""
    ExportJob.objects.filter(pk__in=[pk for pk, _ in jobs]).delete()
    names = [name for _, name in jobs if name]

    def remove() -> None:
        storage = exports_storage()
        for name in names:
            try:
                storage.delete(name)
            except Exception:
                logger.exception("export file %s could not be deleted", name)

    transaction.on_commit(remove)


def quota_enforce(customer_id: str) -> None:
    """A customer's completed exports hold at most EXPORT_STORAGE_QUOTA_MB: past it, its
    oldest completed exports are deleted (job and file); the newest is always kept."""
    quota = settings.EXPORT_STORAGE_QUOTA_MB * 1024 * 1024
    if quota <= 0:
        return
    total = (
        ExportJob.objects.filter(customer_id=customer_id, status=ExportJob.Status.COMPLETED).aggregate(
            total=Sum("size_bytes")
        )["total"]
        or 0
    )
    if total <= quota:
        return
    rows = ExportJob.objects.filter(customer_id=customer_id, status=ExportJob.Status.COMPLETED).order_by(
        "-completed_at", "-pk"
    )
    kept = 0
    doomed: list[tuple[str, str]] = []
    for index, (pk, size, name) in enumerate(rows.values_list("pk", "size_bytes", "file_name").iterator()):
        kept += size or 0
        if index > 0 and kept > quota:
            doomed.append((pk, name))
    if doomed:
        logger.info("customer %s: %d exports deleted over the storage quota", customer_id, len(doomed))
        exports_delete(doomed)


def exports_expire() -> int:
    """Beat: exports finished more than EXPORT_RETENTION_DAYS ago are deleted, job and file
    (GET /export/:id then answers 404). At most 500 a pass."""
    if settings.EXPORT_RETENTION_DAYS <= 0:
        return 0
    cutoff = timezone.now() - dt.timedelta(days=settings.EXPORT_RETENTION_DAYS)
    with transaction.atomic():
        jobs = list(
            ExportJob.objects.filter(
                status__in=[ExportJob.Status.COMPLETED, ExportJob.Status.FAILED], completed_at__lt=cutoff
            )
            .order_by("completed_at")
            .values_list("pk", "file_name")[:500]
        )
        if jobs:
            exports_delete(jobs)
    return len(jobs)
