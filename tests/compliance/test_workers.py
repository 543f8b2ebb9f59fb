"""Exports rendered by real Celery workers (docs/reference/reports.md): the report_ready event reaches a real
receiver signed, and a worker SIGKILLed mid-render leaves a job that another completes."""

import hashlib
import json
import time

import pytest
from standardwebhooks import Webhook as Verifier

from compliance.models import ExportJob
from tests.compliance.helpers import request_export, seed
from tests.processes import celery_worker
from tests.webhooks.test_workers import _kill_tree, _wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _job(api, export_id: str) -> dict:
    return api.get(f"/v1/export/{export_id}").json()


def test_report_ready_reaches_a_real_receiver_signed(transactional_db, insecure, receiver, api):
    r = api.post("/v1/webhooks", {"url": receiver.url, "events": ["compliance.report_ready"]}, format="json")
    assert r.status_code == 201, r.content
    secret = r.json()["secret"]
    seed(api, 30)
    with celery_worker("exports", beat=True, concurrency=2):
        export_id = request_export(api, template="eu_ai_act", format="pdf")["export_id"]
        _wait_for(lambda: _job(api, export_id)["status"] == "completed", 60, "the export")
        _wait_for(lambda: len(receiver.requests) >= 1, 30, "report_ready at the receiver")
    job = _job(api, export_id)
    content = b"".join(api.get(job["download_url"]).streaming_content)
    request = receiver.requests[0]
    body = Verifier(secret).verify(request.body, request.headers)
    assert body["type"] == "compliance.report_ready"
    assert body["data"]["export_id"] == export_id
    assert body["data"]["sha256"] == hashlib.sha256(content).hexdigest() == job["sha256"]
    assert body["data"]["download_url"] == job["download_url"]
    assert content.startswith(b"%PDF")
    assert json.loads(request.body)["data"]["format"] == "pdf"


def test_a_worker_killed_mid_render_leaves_a_job_that_completes_later(transactional_db, api):
    seed(api, 3000)
    fast = {"TRUSTCAL_EXPORT_LEASE_SECONDS": "3", "TRUSTCAL_EXPORT_RECOVER_SECONDS": "1"}
    with celery_worker("victim", concurrency=1, **fast) as proc:
        export_id = request_export(api, template="eu_ai_act", format="pdf")["export_id"]
        _wait_for(lambda: _job(api, export_id)["status"] == "processing", 60, "the render to start")
        _kill_tree(proc.pid)
        proc.wait(10)
    time.sleep(0.5)
    job = ExportJob.objects.get(pk=export_id)
    assert job.status == "processing" and job.attempts == 1 and not job.file_name
    with celery_worker("rescuer", beat=True, concurrency=1, **fast):
        _wait_for(lambda: _job(api, export_id)["status"] == "completed", 120, "the second attempt")
    job.refresh_from_db()
    assert job.attempts == 2 and job.size_bytes and job.sha256
    content = b"".join(api.get(f"/v1/export/{export_id}/download").streaming_content)
    assert hashlib.sha256(content).hexdigest() == job.sha256
