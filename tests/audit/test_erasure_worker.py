"""An erasure that reaches more entries than a web request erases runs on a real Celery worker
(docs/reference/erasure.md, Erasures): 202 `running`, progress on GET /erasures/{id}, parts
each with their own `erasure` entry, `erasure.completed` once, an export that verifies
offline; on PostgreSQL the touched tables are vacuumed afterwards."""

import time

import pytest
from django.db import connection

from audit.models import AuditEntry, ChainHead
from tests.audit.erasure_helpers import checkpoint, erase, export, log
from tests.audit.factories import decision_body
from tests.audit.test_checkpoint_tamper import offline
from tests.processes import celery_worker
from webhooks.models import Event

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("processes")]

PART = 25


def _last_vacuum(table: str):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = %s", [table])
        row = cursor.fetchone()
    return row[0] if row else None


def test_a_large_erasure_answers_running_and_a_worker_completes_it_in_parts(
    transactional_db, api, tmp_path, settings
):
    settings.ERASURE_INLINE_ENTRIES = 20
    settings.ERASURE_PART_ENTRIES = PART
    log(api, 120, subject_id="s-many", user_id="rev")
    log(api, 5, subject_id="s-other", user_id="rev")
    started = erase(api, subject_id="s-many")
    assert started.status_code == 202
    body = started.json()
    assert body["status"] == "running" and body["entries"] == 120 and body["entries_done"] == 0
    assert body["entry_sequence"] is None and not AuditEntry.objects.filter(erased=True).exists()
    # the same request while it runs: the running erasure, nothing more
    again = erase(api, subject_id="s-many")
    assert again.status_code == 200 and again.json()["repeated"] is True
    assert again.json()["erasure_id"] == body["erasure_id"]
    seen: list[int] = []
    with celery_worker("erasures", concurrency=1, TRUSTCAL_ERASURE_PART_ENTRIES=str(PART)):
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            shown = api.get(f"/v1/erasures/{body['erasure_id']}").json()
            seen.append(shown["entries_done"])
            if shown["status"] == "completed":
                break
            time.sleep(0.05)
    assert shown["status"] == "completed", shown
    assert shown["entries"] == shown["entries_done"] == 120
    assert seen == sorted(seen) and all(done % PART == 0 or done == 120 for done in seen), seen
    # every entry of the subject erased, none of the other; one `erasure` entry per part
    assert AuditEntry.objects.filter(erased=True).count() == 120
    assert ChainHead.objects.get(customer_id="acme").erased == 120
    parts = AuditEntry.objects.filter(type="erasure").order_by("sequence")
    assert parts.count() == 5 and shown["entry_sequence"] == parts.last().sequence
    events = Event.objects.filter(type="erasure.completed", data__erasure_id=body["erasure_id"])
    assert events.count() == 1 and events.get().data["entries"] == 120
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    key, note = checkpoint(api, tmp_path)
    code, out = offline("--key", key, "--checkpoint", note, export(api, tmp_path))
    assert code == 0, out
    assert out.count(f"listed by erasure {body['erasure_id']}") == 5
    if connection.vendor == "postgresql":
        # the worker vacuums the tables the erasure touched once it has committed
        table = AuditEntry._meta.db_table
        with celery_worker("vacuum", concurrency=1):
            deadline = time.monotonic() + 60
            while _last_vacuum(table) is None and time.monotonic() < deadline:
                time.sleep(0.5)
        assert _last_vacuum(table) is not None


def test_batches_of_a_reviewer_being_erased_on_a_worker_all_answer(transactional_db, settings):
    """The worker's parts lock the erasure row alone: a lock on the customer's row (which every
    write's deferred foreign-key checks share-lock at commit) ended batches as deadlocks."""
    import threading

    from django.db import connections

    from tests.conftest import client_for, make_key

    settings.RATE_LIMITS_ENABLED = False
    settings.ERASURE_INLINE_ENTRIES = 20
    key = make_key("acme", "enterprise").value
    log(client_for(key), 600, user_id="rev-busy")
    started = erase(client_for(key), user_id="rev-busy").json()
    assert started["status"] == "running"
    statuses: list[int] = []

    def write(_: int) -> None:
        client = client_for(key)
        try:
            for _round in range(4):
                items = [decision_body(user_id="rev-busy" if n % 2 else "other") for n in range(150)]
                statuses.append(client.post("/v1/log/batch", {"decisions": items}, format="json").status_code)
        finally:
            connections.close_all()

    with celery_worker("busy", concurrency=1, TRUSTCAL_ERASURE_PART_ENTRIES="20"):
        writers = [threading.Thread(target=write, args=(w,)) for w in range(4)]
        for thread in writers:
            thread.start()
        for thread in writers:
            thread.join()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            shown = client_for(key).get(f"/v1/erasures/{started['erasure_id']}").json()
            if shown["status"] == "completed":
                break
            time.sleep(0.2)
    assert statuses == [200] * 16, statuses
    assert shown["status"] == "completed" and shown["entries"] >= 600
    assert client_for(key).get("/v1/audit-trail/verify").json()["valid"] is True
