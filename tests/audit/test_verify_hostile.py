"""Chain verification never overstates (docs/reference/limits.md, "Chain verification"): a
full check that finds an entry edited before the checkpoint clears the checkpoint, so every
later check and report says invalid; reports state the range they covered; a full check whose
worker died or whose message was lost is run again by a real worker."""

import datetime as dt
import json
import time

import pytest
from django.utils import timezone

from audit import verify
from audit.models import AuditEntry, ChainCheckpoint, VerifyJob
from tests.processes import celery_worker

pytestmark = pytest.mark.django_db

DECISION = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "deny"}


def _log(api, n: int) -> None:
    for _ in range(n):
        assert api.post("/v1/log", DECISION, format="json").status_code == 201


def _full(api) -> dict:
    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify.verify_job_run(job_id=job["job_id"])  # what a worker does with it
    return api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()


def test_an_edit_before_the_checkpoint_found_by_a_full_check_is_never_valid_again(api):
    _log(api, 6)
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    assert ChainCheckpoint.objects.get(customer_id="acme").sequence == 6
    AuditEntry.objects.filter(customer_id="acme", sequence=2).update(user_decision="approve")
    job = _full(api)
    assert job["status"] == "completed"
    assert job["result"]["valid"] is False and job["result"]["first_invalid_sequence"] == 2
    assert not ChainCheckpoint.objects.filter(customer_id="acme").exists()  # cleared
    _log(api, 1)
    for _ in range(2):
        later = api.get("/v1/audit-trail/verify")
        assert later.json()["valid"] is False and later.json()["first_invalid_sequence"] == 2
        assert later["X-Verified-From-Sequence"] == "0"
    from tests.compliance.helpers import render, request_export

    job = render(api, request_export(api, template="eu_ai_act", format="json")["export_id"])
    report = json.loads(b"".join(api.get(job["download_url"]).streaming_content))
    chain = json.dumps(report["sections"]["audit_trail"])
    assert '"valid": false' in chain


def test_a_report_states_the_range_its_verification_covered(api):
    from compliance import evidence
    from compliance.evidence import Scope
    from keys.models import Customer

    _log(api, 4)
    api.get("/v1/audit-trail/verify")
    _log(api, 3)
    customer = Customer.objects.get(pk="acme")
    now = timezone.now()
    scope = Scope(customer=customer, start=now - dt.timedelta(days=1), end=now, time_period={}, filters={})
    covered = evidence.gather(scope)["chain"]["covered"]
    assert covered["from_sequence"] == 1 and covered["to_sequence"] == 7
    assert covered["rechecked_from_sequence"] == 5 and covered["verified_through_sequence"] == 4
    assert covered["earlier_check_at"].endswith("Z")


def test_a_stuck_full_check_is_sent_again_instead_of_answering_for_ever(api):
    _log(api, 3)
    job_id = api.get("/v1/audit-trail/verify", {"full": "true"}).json()["job_id"]
    # its worker died mid-run: running, lease expired
    VerifyJob.objects.filter(pk=job_id).update(
        status="running", attempts=1, lease_until=timezone.now() - dt.timedelta(seconds=1)
    )
    again = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    assert again["job_id"] == job_id and again["status"] == "queued"
    verify.verify_job_run(job_id=job_id)
    done = api.get("/v1/audit-trail/verify", {"job_id": job_id}).json()
    assert done["status"] == "completed" and done["result"]["valid"] is True
    assert VerifyJob.objects.get(pk=job_id).attempts == 2


def test_a_job_past_its_attempts_is_failed_not_stuck(api, settings):
    _log(api, 1)
    job_id = api.get("/v1/audit-trail/verify", {"full": "true"}).json()["job_id"]
    VerifyJob.objects.filter(pk=job_id).update(
        status="running",
        attempts=settings.VERIFY_MAX_ATTEMPTS,
        lease_until=timezone.now() - dt.timedelta(seconds=1),
    )
    assert verify.verify_jobs_recover() == 1
    assert api.get("/v1/audit-trail/verify", {"job_id": job_id}).json()["status"] == "failed"
    fresh = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    assert fresh["job_id"] != job_id and fresh["status"] == "queued"


def _wait(predicate, seconds: float, what: str) -> None:
    deadline = time.time() + seconds
    while not predicate():
        assert time.time() < deadline, f"{what} did not happen"
        time.sleep(0.3)


# A safety net for a slow machine, not the expected path: a worker takes a message within a
# second or two of starting (a Celery worker starts in about 10 s on a loaded machine).
SAFETY_SECONDS = 120


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_a_real_worker_recovers_jobs_of_a_killed_worker_and_of_a_lost_message(transactional_db, api):
    _log(api, 5)
    # No beat here: nothing would send the message again, so the worker must take the one the
    # request sent (a broker that lost it fails the test instead of waiting for a resend).
    with celery_worker("verify", concurrency=1) as proc:
        first = api.get("/v1/audit-trail/verify", {"full": "true"}).json()["job_id"]
        _wait(
            lambda: VerifyJob.objects.get(pk=first).status == "completed",
            SAFETY_SECONDS,
            "the first full check",
        )
        proc.kill()  # the worker dies; the rows say what it left behind
        proc.wait(10)
    dead = VerifyJob.objects.create(
        customer_id="acme", status="running", attempts=1, lease_until=timezone.now() - dt.timedelta(seconds=1)
    )
    lost = VerifyJob.objects.create(
        customer_id="acme", status="queued", lease_until=timezone.now() - dt.timedelta(seconds=1)
    )  # its message never reached a worker
    # Beat looks for lost jobs every second here (30 s by default) and sends each job again
    # once; a job sent again is not sent a second time before verify.QUEUED_RESEND_SECONDS.
    started = timezone.now()
    with celery_worker("rescuer", beat=True, concurrency=1, TRUSTCAL_VERIFY_RECOVER_SECONDS="1"):
        _wait(
            lambda: (
                set(VerifyJob.objects.filter(pk__in=[dead.pk, lost.pk]).values_list("status", flat=True))
                == {"completed"}
            ),
            SAFETY_SECONDS,
            "the recovery of both jobs",
        )
    resend = dt.timedelta(seconds=verify.QUEUED_RESEND_SECONDS)
    for job in VerifyJob.objects.filter(pk__in=[dead.pk, lost.pk]):
        assert job.result["valid"] is True
        # Done by the first resend: a resent message the broker lost would have waited for the next.
        assert job.completed_at < started + resend, (job.pk, job.completed_at - started)
