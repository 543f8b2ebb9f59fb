"""`subject_id` (docs/reference/erasure.md, What is personal) comes in by every door of the
decision pipeline: POST /log/batch items and import_decisions rows (CSV and JSON Lines) store it,
commit to it in the entry's personal part, refuse a bad one per item, and an erasure by that
subject reaches the decisions they brought."""

import io
import json

import pytest
from django.core.management import call_command

from audit.models import Decision
from tests.audit.erasure_helpers import erase
from tests.audit.factories import all_entries, decision_body

pytestmark = pytest.mark.django_db


def _shown_subjects(api) -> dict[str, str | None]:
    return {e["decision_id"]: e["personal_fields"]["subject_id"] for e in all_entries(api)}


def test_a_batch_takes_subject_id_per_item_and_refuses_a_bad_one(api):
    items = [
        decision_body(decision_id="b-1", subject_id="person-1"),
        decision_body(decision_id="b-2"),
        decision_body(decision_id="b-3", subject_id=""),
        decision_body(decision_id="b-4", subject_id="x" * 129),
        decision_body(decision_id="b-5", subject_id=7),
    ]
    body = api.post("/v1/log/batch", {"decisions": items}, format="json").json()
    assert (body["accepted"], body["rejected"]) == (2, 3)
    refused = [r for r in body["results"] if r["status"] == 400]
    assert [r["error"]["errors"][0]["field"] for r in refused] == ["subject_id"] * 3
    assert dict(Decision.objects.values_list("decision_id", "subject_id")) == {"b-1": "person-1", "b-2": None}
    assert _shown_subjects(api) == {"b-1": "person-1", "b-2": None}
    assert erase(api, subject_id="person-1").json()["entries"] == 1


def test_import_decisions_takes_subject_id_from_csv_and_json_lines(api, tmp_path):
    csv = tmp_path / "decisions.csv"
    csv.write_text(
        "decision_id,user_id,ai_recommendation,user_decision,subject_id\n"
        "i-1,alice,approve,approve,person-2\n"
        "i-2,alice,approve,deny,\n"
        f"i-3,alice,approve,deny,{'y' * 129}\n"
    )
    lines = tmp_path / "decisions.jsonl"
    common = {"user_id": "bob", "ai_recommendation": "deny", "user_decision": "deny"}
    lines.write_text(
        json.dumps({"decision_id": "i-4", "subject_id": "person-2", **common})
        + "\n"
        + json.dumps({"decision_id": "i-5", "subject_id": ["person-2"], **common})
        + "\n"
    )
    for path in (csv, lines):
        call_command(
            "import_decisions", str(path), "--customer-id", "acme", "--no-progress", stdout=io.StringIO()
        )
    rejected = [
        json.loads(line)
        for path in (csv, lines)
        for line in (tmp_path / f"{path.name}.rejected.jsonl").read_text().splitlines()
    ]
    assert [(r["line"], r["error"]["errors"][0]["field"]) for r in rejected] == [
        (4, "subject_id"),
        (2, "subject_id"),
    ]
    assert _shown_subjects(api) == {"i-1": "person-2", "i-2": None, "i-4": "person-2"}
    assert erase(api, subject_id="person-2").json()["entries"] == 2
    assert Decision.objects.filter(subject_id__isnull=False).count() == 0
