"""Stored report files that may hold erased personal data are deleted with their jobs
(docs/reference/erasure.md): every export whose period reaches the decisions an erasure
touched."""

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
