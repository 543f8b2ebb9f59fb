"""A render gives its memory back (docs/deploy.md, Memory): a real Celery worker's pool process
that rendered a report is replaced by a fresh one once the render is over, on the default
TRUSTCAL_WORKER_MAX_MEMORY_PER_CHILD_MB, and the job is completed by the process that rendered it."""

from pathlib import Path

import pytest

from compliance.models import ExportJob
from tests.compliance.helpers import request_export, seed
from tests.processes import celery_worker
from tests.webhooks.test_workers import _wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _pool(worker_pid: int) -> list[int]:
    children = Path(f"/proc/{worker_pid}/task/{worker_pid}/children")
    return [int(pid) for pid in children.read_text().split()] if children.exists() else []


def _resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_the_pool_process_that_rendered_a_report_is_replaced_by_a_fresh_one(transactional_db, api, settings):
    seed(api, 3000)
    limit_mb = settings.WORKER_MAX_MEMORY_PER_CHILD_MB
    assert limit_mb > 0
    with celery_worker("recycle", concurrency=1) as proc:
        _wait_for(lambda: len(_pool(proc.pid)) == 1, 90, "the pool process")
        (before,) = _pool(proc.pid)
        assert _resident_mb(before) < limit_mb  # an idle pool process is under the limit
        export_id = request_export(api, template="eu_ai_act", format="pdf")["export_id"]
        _wait_for(lambda: ExportJob.objects.get(pk=export_id).status == "completed", 180, "the render")
        _wait_for(lambda: _pool(proc.pid) and _pool(proc.pid) != [before], 60, "a fresh pool process")
        (after,) = _pool(proc.pid)
        assert after != before and _resident_mb(after) < limit_mb
    job = ExportJob.objects.get(pk=export_id)
    assert job.attempts == 1 and job.size_bytes and job.sha256  # rendered once, not redelivered
