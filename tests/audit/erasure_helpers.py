"""What the erasure tests share (docs/reference/erasure.md): logging, checkpoints, exports,
the erasure request, a dump of the database, and one subject's decisions erased."""

import json
from dataclasses import dataclass
from typing import Any

from django.db import connection

from audit import verify
from bias.models import SubgroupDailyStat
from calibration.models import UserDailyAggregate
from tests.audit.factories import decision_body

SUBJECT = "subj-7f3e9a-unique-erasure-value"
CONTEXT = "context-naming-subj-7f3e9a"
REVIEWER = "reviewer-c41d-unique"
GROUP = "group-b82e5d-unique"  # an ethnicity only this subject has
# Counts per group, not per person: the one place a group's name stays after an erasure.
STATISTICS = "bias_subgroupdailystat"


def log(api, n: int = 1, **fields) -> None:
    items = [decision_body(**fields) for _ in range(n)]
    response = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert response.status_code == 200 and response.json()["rejected"] == 0, response.content


def checkpoint(api, tmp_path) -> tuple[str, str]:
    made = api.post("/v1/audit-trail/checkpoints").json()
    note = tmp_path / f"checkpoint-{made['sequence']}.json"
    note.write_text(json.dumps(made))
    key = tmp_path / "key.txt"
    key.write_text(api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"])
    return str(key), str(note)


def export(api, tmp_path) -> str:
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    return str(path)


def erase(api, **body):
    body.setdefault("reason", "the data subject asked")
    body.setdefault("legal_basis", "gdpr_art_17_1_a")
    body.setdefault("override_minimum", True)
    return api.post("/v1/erasures", body, format="json")


def full_check(api) -> dict:
    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify.verify_job_run(job_id=job["job_id"])
    return api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()["result"]


def dump(*, leave_out: tuple[str, ...] = ()) -> str:
    """Every row of every table as text, read in the test's own transaction (a pg_dump in
    another session would see none of the test's uncommitted rows), but the tables left out."""
    out = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            if table not in leave_out:
                cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608
                out.append(f"{table}: {cursor.fetchall()!r}")
    return "\n".join(out)


def found(text: str, *values: str) -> list[str]:
    return [value for value in values if value in text]


def figures() -> dict[str, list[Any]]:
    """The organisation's figures an erasure must leave as they are."""
    return {
        "users": sorted(UserDailyAggregate.objects.values_list("user_id", "n", "conf_sum")),
        "groups": sorted(SubgroupDailyStat.objects.values_list("attribute", "group_value", "count")),
    }


@dataclass(frozen=True)
class SubjectErased:
    key: str  # the checkpoint verifier key's file
    before: str  # a checkpoint signed before the erasure
    figures: dict[str, list[Any]]  # as they were before the erasure
    answer: dict[str, Any]  # POST /erasures


def subject_erased(api, tmp_path) -> SubjectErased:
    """Sequences 1-3 alice's, 4-5 SUBJECT's (context CONTEXT), 6 SUBJECT's decision whose
    subgroups (ethnicity GROUP) came by POST /detect-bias at 7, 8-9 bob's; a checkpoint; the
    erasure of SUBJECT (its entry is 10)."""
    log(api, 3, user_id="alice")
    log(api, 2, user_id="alice", subject_id=SUBJECT, context=CONTEXT, subgroups={"gender": "f"})
    log(api, 1, user_id="alice", subject_id=SUBJECT, decision_id="d-attached")
    attached = {"decision_id": "d-attached", "subgroups": {"ethnicity": GROUP}}
    assert api.post("/v1/detect-bias", attached, format="json").status_code == 200
    log(api, 2, user_id="bob")
    key, before = checkpoint(api, tmp_path)
    api.get("/v1/audit-trail/verify")  # the checked-through point, before the erasure
    assert found(dump(), SUBJECT, CONTEXT, GROUP) == [SUBJECT, CONTEXT, GROUP]  # the grep can tell a hit
    was = figures()
    response = erase(api, subject_id=SUBJECT)
    assert response.status_code == 202, response.content
    return SubjectErased(key, before, was, response.json())
