"""GET /audit-trail/verify keeps the point it checked the chain through, the Merkle tree's
edge there and the signed checkpoints verified up to it, so a call reads only the entries
appended since, for the chain and the checkpoints alike; a tamper behind the point is left
to the full check, which finds it and clears the point (docs/reference/checkpoints.md,
"Verification by the service"; docs/reference/limits.md, "Chain verification")."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit import verify
from audit.models import AuditEntry, ChainCheckpoint, ChainHead, SignedCheckpoint
from tests.audit.factories import decision_body
from tests.audit.tamper import rewrite_chain

pytestmark = pytest.mark.django_db

ENTRIES_TABLE = AuditEntry._meta.db_table
# Besides the entries it checks, a valid check reads one row: the last entry's sequence (is
# there an entry beyond the head?).
LAST = 1
DECLARED = re.compile(r"^DECLARE .+? CURSOR (?:WITH(?:OUT)? HOLD )?FOR ", re.IGNORECASE)


def _append(api, n: int) -> None:
    body = api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(n)]}, format="json").json()
    assert body["accepted"] == n


def _sign(api) -> int:
    made = api.post("/v1/audit-trail/checkpoints")
    assert made.status_code == 201
    return made.json()["sequence"]


def _entry_rows_read(call) -> tuple[object, int]:
    """Run `call` and count the rows that its statements over the audit entries return: each
    captured SELECT from that table is run again as a COUNT (the data is unchanged meanwhile)."""
    with CaptureQueriesContext(connection) as captured:
        answer = call()
    # PostgreSQL streams through a server-side cursor: DECLARE ... CURSOR FOR <the SELECT>
    statements = [DECLARED.sub("", q["sql"].lstrip()) for q in captured.captured_queries]
    selects = [
        sql for sql in statements if sql.upper().startswith("SELECT") and f'FROM "{ENTRIES_TABLE}"' in sql
    ]
    read = 0
    with connection.cursor() as cursor:
        for sql in selects:
            cursor.execute(f"SELECT COUNT(*) FROM ({sql}) AS read_rows")  # noqa: S608 (the service's own SQL)
            read += cursor.fetchone()[0]
    return answer, read


def test_a_call_after_n_new_entries_reads_those_n_entries_for_the_chain_and_the_checkpoints(api):
    _append(api, 40)
    _sign(api)
    _append(api, 30)
    _sign(api)
    first, read = _entry_rows_read(lambda: api.get("/v1/audit-trail/verify"))
    body = first.json()
    assert body["valid"] is True and body["entries_checked"] == 70 and body["checkpoints_checked"] == 2
    assert read == 70 + LAST  # the whole chain once: entries and checkpoints share one read
    _append(api, 25)
    assert _sign(api) == 95
    _append(api, 5)
    second, read = _entry_rows_read(lambda: api.get("/v1/audit-trail/verify"))
    body = second.json()
    assert second["X-Verified-From-Sequence"] == "70"
    assert body["valid"] is True and body["entries_checked"] == 100 and body["checkpoints_checked"] == 3
    assert read == 30 + LAST  # the entries appended since, not the 95 the checkpoints cover
    third, read = _entry_rows_read(lambda: api.get("/v1/audit-trail/verify"))
    assert third.json()["checkpoints_checked"] == 3 and read == LAST
    point = ChainCheckpoint.objects.get(customer_id="acme")
    assert (point.sequence, point.checkpoints_checked, len(bytes(point.tree_edge))) == (100, 3, 3 * 32)


def test_a_checkpoint_after_the_point_that_the_chain_no_longer_matches_fails_and_clears_the_point(api):
    _append(api, 8)
    _sign(api)
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    _append(api, 4)
    _sign(api)
    forged = SignedCheckpoint.objects.get(customer_id="acme", sequence=12)
    SignedCheckpoint.objects.filter(pk=forged.pk).update(root_hash="00" * 32)
    body = api.get("/v1/audit-trail/verify").json()
    assert body["valid"] is False and body["first_invalid_checkpoint"] == 12
    assert not ChainCheckpoint.objects.filter(customer_id="acme").exists()
    again = api.get("/v1/audit-trail/verify")
    assert again["X-Verified-From-Sequence"] == "0" and again.json()["first_invalid_checkpoint"] == 12


def test_a_rewrite_behind_the_point_is_found_by_the_full_job_which_clears_the_point(api):
    _append(api, 8)
    _sign(api)
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    rewrite_chain("acme", from_sequence=3)  # behind the point
    _append(api, 2)  # the chain goes on from the rewritten head
    quick = api.get("/v1/audit-trail/verify")
    assert quick["X-Verified-From-Sequence"] == "8"  # the incremental call did not read behind it
    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify.verify_job_run(job_id=job["job_id"])  # what a worker does with it
    done = api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()
    assert done["status"] == "completed"
    assert done["result"]["valid"] is False and done["result"]["first_invalid_checkpoint"] == 8
    assert not ChainCheckpoint.objects.filter(customer_id="acme").exists()
    for _ in range(2):
        later = api.get("/v1/audit-trail/verify")
        assert later["X-Verified-From-Sequence"] == "0"
        assert later.json()["valid"] is False and later.json()["first_invalid_checkpoint"] == 8


def test_a_full_check_that_passes_stores_its_point_for_the_next_call(api):
    _append(api, 12)
    _sign(api)
    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify.verify_job_run(job_id=job["job_id"])
    assert api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()["result"]["valid"] is True
    answer, read = _entry_rows_read(lambda: api.get("/v1/audit-trail/verify"))
    assert answer["X-Verified-From-Sequence"] == "12" and read == LAST
    assert answer.json()["checkpoints_checked"] == 1 and answer.json()["valid"] is True


def test_a_signed_checkpoint_deleted_behind_the_point_makes_the_next_call_recheck_from_the_start(api):
    _append(api, 6)
    _sign(api)
    _append(api, 6)
    _sign(api)
    assert api.get("/v1/audit-trail/verify").json()["checkpoints_checked"] == 2
    SignedCheckpoint.objects.filter(customer_id="acme", sequence=6).delete()
    answer, read = _entry_rows_read(lambda: api.get("/v1/audit-trail/verify"))
    assert answer["X-Verified-From-Sequence"] == "0" and read == 12 + LAST
    assert answer.json()["checkpoints_checked"] == 1 and answer.json()["valid"] is True


def test_a_checkpoint_signed_while_a_call_reads_the_chain_is_checked_by_the_next_call(api, monkeypatch):
    _append(api, 5)
    assert api.get("/v1/audit-trail/verify").json()["checkpoints_checked"] == 0
    _append(api, 5)

    class SignedMeanwhile(verify.CheckpointWalk):
        """The walk of a call during which an append's checkpoint is signed (a commit that
        lands after the call listed the checkpoints, at a size the call then reads)."""

        def entry(self, sequence: int, hash_hex: str) -> None:
            if sequence == 6:
                assert api.post("/v1/audit-trail/checkpoints").status_code == 201
            super().entry(sequence, hash_hex)

    monkeypatch.setattr(verify, "CheckpointWalk", SignedMeanwhile)
    during = api.get("/v1/audit-trail/verify").json()
    monkeypatch.undo()
    assert during["valid"] is True and during["checkpoints_checked"] == 0  # not counted unchecked
    assert ChainCheckpoint.objects.get(customer_id="acme").sequence == 5  # and not passed over
    after = api.get("/v1/audit-trail/verify")
    assert after["X-Verified-From-Sequence"] == "5"
    assert after.json()["checkpoints_checked"] == 1 and after.json()["valid"] is True
    assert ChainCheckpoint.objects.get(customer_id="acme").sequence == 10


def test_entries_appended_while_a_call_reads_the_chain_leave_its_answer_valid(api, monkeypatch):
    _append(api, 5)

    class AppendedMeanwhile(verify.CheckpointWalk):
        """The walk of a call during which another request appends (and commits) an entry."""

        def entry(self, sequence: int, hash_hex: str) -> None:
            if sequence == 3:
                assert api.post("/v1/log", decision_body(), format="json").status_code == 201
            super().entry(sequence, hash_hex)

    monkeypatch.setattr(verify, "CheckpointWalk", AppendedMeanwhile)
    during = api.get("/v1/audit-trail/verify").json()
    monkeypatch.undo()
    # the chain as its head stood when the call began, not a mismatch with a head that moved on
    assert during["valid"] is True and during["entries_checked"] == 5
    assert ChainCheckpoint.objects.get(customer_id="acme").sequence == 5
    after = api.get("/v1/audit-trail/verify")
    assert after["X-Verified-From-Sequence"] == "5" and after.json()["entries_checked"] == 6


def test_an_entry_beyond_the_head_is_invalid(api):
    _append(api, 8)
    ChainHead.objects.filter(customer_id="acme").update(
        sequence=7, head_hash=AuditEntry.objects.get(customer_id="acme", sequence=7).hash
    )
    body = api.get("/v1/audit-trail/verify").json()
    assert body["valid"] is False and body["first_invalid_sequence"] == 8
