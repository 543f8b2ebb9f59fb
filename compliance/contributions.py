"""Stored report files that may hold erased personal data are deleted with their jobs
(docs/reference/erasure.md): every export whose period reaches the decisions an erasure
touched, and every export narrowed to an erased reviewer (its filters name them, and so do
its file's title page and data)."""

from audit.registry import Erased, register_eraser
from compliance.models import ExportJob
from compliance.services import exports_delete


@register_eraser
def delete_exports_holding(erased: Erased) -> int:
    """Exports whose period reaches the erased entries' decisions, and those whose filters name
    an erased reviewer, are deleted; returns how many."""
    jobs: list[tuple[str, str]] = []
    if erased.first_timestamp is not None and erased.last_timestamp is not None:
        jobs = list(
            ExportJob.objects.filter(
                customer_id=erased.customer_id,
                period_start__lte=erased.last_timestamp,
                period_end__gt=erased.first_timestamp,
            ).values_list("pk", "file_name")
        )
    if erased.user_id is not None:
        narrowed = ExportJob.objects.filter(customer_id=erased.customer_id, filters__has_key="user_ids")
        jobs += [
            (job.pk, job.file_name)
            for job in narrowed.only("pk", "file_name", "filters")
            if erased.user_id in (job.filters.get("user_ids") or [])
        ]
    exports_delete(jobs)
    return len({pk for pk, _ in jobs})
