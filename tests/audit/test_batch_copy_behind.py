"""A large batch on PostgreSQL ends its decisions' and staging COPYs on a helper thread while
its request builds the next rows (config.behind): the COPY's end overlaps that Python, the
server sees the same statements in the same order, and a COPY's error is raised in the
request's thread before anything else (the figures themselves are compared with the same
calls one by one in tests/audit/test_log_batch.py)."""

import threading

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

import audit.pipeline
import calibration.setwise
from config import prepared
from config.behind import behind, copy_from, joined
from tests.audit.factories import all_entries, decision_body, recompute_hash
from tests.conftest import client_for, make_key

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'"),
]


def _ending() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name == "copy-end"]


def test_a_large_batch_builds_its_staging_rows_while_its_decisions_copy_ends(monkeypatch, settings):
    settings.RATE_LIMITS_ENABLED = False
    seen: list[list[str]] = []
    rows = calibration.setwise.staged_rows

    def staged_rows(changes):
        seen.append(_ending())
        return rows(changes)

    monkeypatch.setattr(calibration.setwise, "staged_rows", staged_rows)
    api = client_for(make_key().value)
    items = [decision_body(user_id=f"user-{n % 7}", subgroups={"gender": "fm"[n % 2]}) for n in range(120)]
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert r.status_code == 200 and r.json()["accepted"] == 120, r.content
    assert seen == [["copy-end"]]  # the decisions' COPY was still ending on its thread
    assert _ending() == []  # joined before the request ended
    entries = all_entries(api)
    assert [e["sequence"] for e in entries] == list(range(1, 121))
    assert all(e["hash"] == recompute_hash(e) for e in entries)
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_a_decision_the_read_missed_meets_the_copys_unique_key_and_the_batch_runs_again(
    monkeypatch, settings
):
    """A decision written concurrently after the batch's read: the decisions' COPY meets the
    unique key on its helper thread and the write runs once more, reading it (a replay)."""
    settings.RATE_LIMITS_ENABLED = False
    api = client_for(make_key().value)
    first = decision_body(decision_id="taken")
    assert api.post("/v1/log", first, format="json").status_code == 201
    load, calls = audit.pipeline.stored_load, []

    def stored_load(customer, items, *, optimistic=False):
        calls.append(len(items))
        stored = load(customer, items, optimistic=optimistic)
        if len(calls) == 1:
            stored.decisions.clear()  # as if "taken" was committed just after this read
        return stored

    monkeypatch.setattr(audit.pipeline, "stored_load", stored_load)
    items = [decision_body(user_id=f"user-{n % 7}") for n in range(80)] + [first]
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert r.status_code == 200, r.content
    assert len(calls) == 2 and r.json()["accepted"] == 80 and r.json()["replayed"] == 1
    assert [e["sequence"] for e in all_entries(api)] == list(range(1, 82))
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_a_copys_error_on_its_helper_thread_is_raised_at_the_next_use_of_the_connection():
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE behind_t (k int PRIMARY KEY) ON COMMIT DROP")
        with pytest.raises(IntegrityError), behind():
            with copy_from("COPY behind_t (k) FROM STDIN", behind=True) as copy:
                for k in (1, 2, 2):
                    copy.write_row((k,))
            raise ValueError("the Python after the COPY")  # replaced by the COPY's error
        transaction.set_rollback(True)


def test_a_copys_error_on_its_helper_thread_is_raised_at_a_prepared_statement_after_it():
    # config.prepared's cursors bind on the server, outside Django's execute wrapper: their
    # execute() joins the thread itself, so the COPY's own error is the one raised (not the
    # aborted transaction's, which the statement would meet after waiting for the COPY's end).
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE behind_p (k int PRIMARY KEY) ON COMMIT DROP")
        raised: list[type[DatabaseError]] = []
        with behind():
            with copy_from("COPY behind_p (k) FROM STDIN", behind=True) as copy:
                for k in (1, 2, 2):
                    copy.write_row((k,))
            try:
                with prepared.cursor() as bound:
                    bound.execute("SELECT count(*) FROM behind_p", [])
            except DatabaseError as error:
                raised.append(type(error))
        assert raised == [IntegrityError]
        transaction.set_rollback(True)


def test_a_copy_ending_behind_is_joined_before_the_next_statement():
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE behind_u (k int PRIMARY KEY) ON COMMIT DROP")
        with behind():
            with copy_from("COPY behind_u (k) FROM STDIN", behind=True) as copy:
                for k in range(5000):
                    copy.write_row((k,))
            cursor.execute("SELECT count(*) FROM behind_u")  # through Django: joined first
            assert cursor.fetchone() == (5000,)
            with copy_from("COPY behind_u (k) FROM STDIN", behind=True) as copy:
                copy.write_row((5000,))
            joined()
            assert _ending() == []


def test_a_copy_ends_in_the_request_thread_when_no_thread_can_start(monkeypatch):
    def refused(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE behind_v (k int PRIMARY KEY) ON COMMIT DROP")
        with behind():
            with copy_from("COPY behind_v (k) FROM STDIN", behind=True) as copy:
                copy.write_row((1,))
            lock = connection.connection.lock  # the COPY's end released it already
            assert lock.acquire(blocking=False)
            lock.release()
        cursor.execute("SELECT count(*) FROM behind_v")
        assert cursor.fetchone() == (1,)
