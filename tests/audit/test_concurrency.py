"""Many concurrent writers for one customer leave a gapless, valid chain (docs/reference/decisions.md).

The writers are threads, each with its own database connection, posting through the real
view stack (the test client is in-process, so 2,000 requests stay fast); the chain head
row lock is what serialises them on PostgreSQL."""

import threading

import pytest
from django.db import connection, connections

from audit.models import AuditEntry, Decision
from audit.verify import verify_job_run
from calibration.models import UserDailyAggregate
from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key


def _writers(key_value: str, *, writers: int, per_writer: int) -> list[int]:
    statuses: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(writers)

    def work(w: int) -> None:
        client = client_for(key_value)
        barrier.wait()
        try:
            for i in range(per_writer):
                body = decision_body(
                    decision_id=f"w{w}-{i}", user_id=f"user-{w % 3}", ai_confidence=(i % 10) / 10
                )
                r = client.post("/v1/log", body, format="json")
                with lock:
                    statuses.append(r.status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def _assert_gapless_and_valid(key_value: str, total: int) -> None:
    sequences = list(
        AuditEntry.objects.filter(customer_id="acme").order_by("sequence").values_list("sequence", flat=True)
    )
    assert sequences == list(range(1, total + 1))
    assert Decision.objects.filter(customer_id="acme").count() == total
    verify = client_for(key_value).get("/v1/audit-trail/verify").json()
    assert verify["valid"] is True, verify
    assert verify["entries_checked"] == total
    # The aggregates were updated in the same transactions: nothing lost under contention.
    assert (
        sum(UserDailyAggregate.objects.filter(customer_id="acme", model_key="*").values_list("n", flat=True))
        == total
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_concurrent_writers_of_250_decisions_leave_sequence_1_to_2000_gapless_and_valid(settings):
    settings.RATE_LIMITS_ENABLED = False
    key = make_key("acme", "enterprise")
    statuses = _writers(key.value, writers=8, per_writer=250)
    assert statuses.count(201) == 2000, {s: statuses.count(s) for s in set(statuses)}
    _assert_gapless_and_valid(key.value, 2000)
    # Tamper with one stored field directly, behind the verified checkpoint: the full
    # recheck (a job) names that entry's sequence.
    AuditEntry.objects.filter(customer_id="acme", sequence=1234).update(context="edited")
    api = client_for(key.value)
    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify_job_run(job_id=job["job_id"])
    verify = api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()["result"]
    assert verify["valid"] is False
    assert verify["first_invalid_sequence"] == 1234
    assert connection.vendor == "postgresql"


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_keep_the_chain_gapless_on_any_database(settings):
    settings.RATE_LIMITS_ENABLED = False
    key = make_key("acme", "enterprise")
    statuses = _writers(key.value, writers=4, per_writer=15)
    assert statuses.count(201) == 60, {s: statuses.count(s) for s in set(statuses)}
    _assert_gapless_and_valid(key.value, 60)
