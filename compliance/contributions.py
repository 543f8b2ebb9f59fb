"""Stored report files that may hold erased personal data are deleted with their jobs
(docs/reference/erasure.md): every export whose period reaches the decisions an erasure
touched, and every export narrowed to an erased reviewer (its filters name them, and so do
its file's title page and data)."""

from audit.registry import Erased, register_eraser
from compliance.models import ExportJob
from compliance.services import exports_delete


@register_eraser
def delete_exports_holding(erased: Erased) -> None:
    jobs = ExportJob.objects.filter(
        customer_id=erased.customer_id,
        period_start__lte=erased.last_timestamp,
        period_end__gt=erased.first_timestamp,
    ).values_list("pk", "file_name")
    exports_delete(list(jobs))
    if erased.user_id is not None:
        narrowed = ExportJob.objects.filter(customer_id=erased.customer_id, filters__has_key="user_ids")
        exports_delete(
            [
                (job.pk, job.file_name)
                for job in narrowed.only("pk", "file_name", "filters")
                if erased.user_id in (job.filters.get("user_ids") or [])
            ]
        )
