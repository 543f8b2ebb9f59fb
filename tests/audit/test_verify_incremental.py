"""GET /audit-trail/verify is incremental from a stored checkpoint; ?full=true rechecks the
whole chain as a job, one at a time per customer (docs/reference/decisions.md)."""

import threading

import pytest
from django.db import connection

from audit import verify
from audit.models import AuditEntry, ChainCheckpoint
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db

DECISION = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "deny"}


def _log(api, n: int) -> None:
    for _ in range(n):
        assert api.post("/v1/log", DECISION, format="json").status_code == 201


def test_verify_rechecks_only_what_was_appended_since_the_checkpoint(api):
    _log(api, 5)
    first = api.get("/v1/audit-trail/verify")
    assert first.json()["valid"] is True and first.json()["entries_checked"] == 5
    assert first["X-Verified-From-Sequence"] == "0"
    assert ChainCheckpoint.objects.get(customer_id="acme").sequence == 5
    _log(api, 2)
    second = api.get("/v1/audit-trail/verify")
    assert second["X-Verified-From-Sequence"] == "5"
    assert second.json()["entries_checked"] == 7 and second.json()["valid"] is True
    # tampering after the checkpoint is still found by the incremental check
    _log(api, 2)
    AuditEntry.objects.filter(customer_id="acme", sequence=8).update(user_decision="approve")
    third = api.get("/v1/audit-trail/verify").json()
    assert third["valid"] is False and third["first_invalid_sequence"] == 8
    # a check that finds the chain invalid clears the point: the next call rechecks it all
    assert not ChainCheckpoint.objects.filter(customer_id="acme").exists()
    fourth = api.get("/v1/audit-trail/verify")
    assert fourth["X-Verified-From-Sequence"] == "0" and fourth.json()["first_invalid_sequence"] == 8


def test_full_recheck_is_a_job_that_finds_tampering_before_the_checkpoint(api, other_api):
    from config.celery import app

    _log(api, 4)
    api.get("/v1/audit-trail/verify")
    AuditEntry.objects.filter(customer_id="acme", sequence=2).update(user_decision="approve")
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True  # before the checkpoint
    queued = api.get("/v1/audit-trail/verify", {"full": "true"})
    assert queued.status_code == 202
    job = queued.json()
    assert set(job) == {"job_id", "status", "created_at", "completed_at", "result"}
    assert job["status"] == "queued" and job["result"] is None
    # one at a time per customer: a second request answers the same job
    assert api.get("/v1/audit-trail/verify", {"full": "true"}).json()["job_id"] == job["job_id"]
    assert other_api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).status_code == 404
    app.conf.task_always_eager = True
    try:
        verify.verify_job_run(job_id=job["job_id"])
    finally:
        app.conf.task_always_eager = False
    done = api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()
    assert done["status"] == "completed" and done["completed_at"].endswith("Z")
    assert done["result"]["valid"] is False and done["result"]["first_invalid_sequence"] == 2
    assert api.get("/v1/audit-trail/verify", {"full": "maybe"}).status_code == 400


@pytest.mark.django_db(transaction=True)
def test_concurrent_verifies_of_one_customer_scan_the_chain_once():
    value = make_key("busy").value
    api = client_for(value)
    _log(api, 30)
    results: list[tuple[int, str]] = []

    def call() -> None:
        response = client_for(value).get("/v1/audit-trail/verify")
        results.append((response.json()["entries_checked"], response["X-Verified-From-Sequence"]))
        connection.close()

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(checked == 30 for checked, _ in results)
    assert sorted(start for _, start in results).count("0") == 1  # the others started at 30
