"""A JSON number is stored as the value it denotes (`-0.0` is `0.0`) and an object with a
duplicate key is INVALID_JSON, on every way a decision comes in (docs/reference/decisions.md,
"Numbers and keys"); a chain holding `-0.0` keeps verifying, online and offline."""

import io
import json

import pytest

from audit import offline_verify
from audit.models import AuditEntry, Decision
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

BASE = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "approve"}


def _raw(api, path: str, text: str, content_type: str = "application/json"):
    return api.generic("POST", path, text.encode(), content_type=content_type)


@pytest.mark.parametrize(
    "body",
    [
        '{"user_id":"u1","ai_recommendation":"approve","user_decision":"approve","ai_confidence":-0.0}',
        '{"user_id":"u1","ai_recommendation":"approve","user_decision":"approve","confidence":-0.0}',
        '{"user_id":"u1","ai_recommendation":"approve","user_decision":"approve","review_seconds":-0.0}',
        '{"user_id":"u1","ai_recommendation":"approve","user_decision":"approve","ai_confidence":-0e5}',
    ],
)
def test_negative_zero_is_stored_as_zero_and_the_chain_verifies(api, body):
    response = _raw(api, "/v1/log", body)
    assert response.status_code == 201, response.content
    shown = response.json()
    for name in ("ai_confidence", "review_seconds"):
        if shown.get(name) is not None:
            assert json.dumps(shown[name]) in ("0.0", "0")
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_negative_zero_in_a_batch_item_and_the_calibrate_body(api):
    batch = (
        '{"decisions":[{"user_id":"u1","ai_recommendation":"a","user_decision":"a","ai_confidence":-0.0}]}'
    )
    assert _raw(api, "/v1/log/batch", batch).status_code in (200, 201, 207)
    ndjson = '{"user_id":"u2","ai_recommendation":"a","user_decision":"a","review_seconds":-0.0}\n'
    assert _raw(api, "/v1/log/batch", ndjson, "application/x-ndjson").status_code in (200, 201, 207)
    calibrate = '{"user_id":"u3","ai_recommendation":"a","user_decision":"a","confidence":-0.0}'
    assert _raw(api, "/v1/calibrate", calibrate).status_code in (200, 201)
    assert Decision.objects.filter(customer_id="acme").count() == 3
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


@pytest.mark.parametrize(
    ("path", "text", "content_type"),
    [
        (
            "/v1/log",
            '{"user_id":"u1","ai_recommendation":"a","user_decision":"deny","user_decision":"approve"}',
            None,
        ),
        (
            "/v1/log",
            '{"user_id":"u1","ai_recommendation":"a","user_decision":"a","subgroups":{"gender":"f","gender":"m"}}',
            None,
        ),
        (
            "/v1/log/batch",
            '{"decisions":[],"decisions":[{"user_id":"u1","ai_recommendation":"a","user_decision":"a"}]}',
            None,
        ),
        (
            "/v1/log/batch",
            '{"decisions":[{"user_id":"u1","user_id":"u2","ai_recommendation":"a","user_decision":"a"}]}',
            None,
        ),
        (
            "/v1/log/batch",
            '{"user_id":"u1","user_id":"u2","ai_recommendation":"a","user_decision":"a"}\n',
            "application/x-ndjson",
        ),
    ],
)
def test_a_duplicate_key_is_invalid_json_and_stores_nothing(api, path, text, content_type):
    response = _raw(api, path, text, content_type or "application/json")
    assert_problem(response, 400, "INVALID_JSON")
    assert not AuditEntry.objects.filter(customer_id="acme").exists()


def test_the_offline_verifier_fails_a_line_with_a_duplicate_key(api, tmp_path):
    assert api.post("/v1/log", BASE, format="json").status_code == 201
    made = api.post("/v1/audit-trail/checkpoints").json()
    (tmp_path / "checkpoint.json").write_text(json.dumps(made))
    (tmp_path / "key.txt").write_text(api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"])
    line = b"".join(api.get("/v1/audit-trail/export").streaming_content).decode().strip()
    # shown as "deny" by a reader that keeps the first, hashed as "approve" by one that keeps the last
    altered = '{"user_decision":"deny",' + line.strip()[1:]
    assert json.loads(altered) == json.loads(line)
    export = tmp_path / "export.ndjson"
    export.write_text(altered + "\n", encoding="utf-8")
    args = ["--key", str(tmp_path / "key.txt"), "--checkpoint", str(tmp_path / "checkpoint.json")]
    out = io.StringIO()
    assert offline_verify.main([*args, "--jobs", "1", str(export)], out=out) == 1, out.getvalue()
    assert "duplicate key" in out.getvalue()


def _hashed_with_negative_zero(customer_id: str, sequence: int) -> None:
    """What the service did before numbers were read as their values: the entry hashed with
    `-0.0` while the database holds 0.0 (the chain after it relinked, the tree rebuilt)."""
    from audit import tree
    from audit.chain import entry_document
    from audit.hashing import entry_hash
    from audit.models import ChainHead

    entries = list(AuditEntry.objects.filter(customer_id=customer_id).order_by("sequence"))
    previous = entries[0].previous_hash
    for entry in entries:  # format-1 entries, as every entry was then
        entry.format, entry.canonical, entry.salt = 1, None, None
        doc = entry_document(entry)
        doc["previous_hash"] = entry.previous_hash = previous
        if entry.sequence == sequence:
            doc["ai_confidence"] = -0.0
        entry.hash = previous = entry_hash(doc)
        entry.save()
    ChainHead.objects.filter(customer_id=customer_id).update(head_hash=previous)
    tree.tree_rebuild(customer_id, len(entries))


def test_a_chain_that_holds_an_entry_hashed_with_negative_zero_verifies_online_and_offline(api, tmp_path):
    for confidence in (0.5, 0.0, 0.25):
        assert api.post("/v1/log", {**BASE, "ai_confidence": confidence}, format="json").status_code == 201
    _hashed_with_negative_zero("acme", 2)
    assert api.get("/v1/audit-trail/verify", {"full": "false"}).json()["valid"] is True
    made = api.post("/v1/audit-trail/checkpoints").json()
    (tmp_path / "checkpoint.json").write_text(json.dumps(made))
    (tmp_path / "key.txt").write_text(api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"])
    export = tmp_path / "export.ndjson"
    export.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    args = ["--key", str(tmp_path / "key.txt"), "--checkpoint", str(tmp_path / "checkpoint.json")]
    out = io.StringIO()
    assert offline_verify.main([*args, "--jobs", "1", str(export)], out=out) == 0, out.getvalue()
    # the rule forgives the sign of a zero only: any other change still fails
    AuditEntry.objects.filter(customer_id="acme", sequence=2).update(ai_confidence=0.5)
    from audit import verify

    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify.verify_job_run(job_id=job["job_id"])
    result = api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()["result"]
    assert result["valid"] is False and result["first_invalid_sequence"] == 2


def test_import_decisions_reads_numbers_and_keys_as_the_api_does(api, tmp_path):
    from django.core.management import call_command

    lines = [
        '{"decision_id":"i-1","user_id":"u","ai_recommendation":"a","user_decision":"a","ai_confidence":-0.0}',
        '{"decision_id":"i-2","user_id":"u","user_id":"v","ai_recommendation":"a","user_decision":"a"}',
    ]
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    csv_path = tmp_path / "decisions.csv"
    csv_path.write_text("decision_id,user_id,ai_recommendation,ai_confidence,user_decision\ni-3,u,a,-0.0,a\n")
    for source in (path, csv_path):
        call_command(
            "import_decisions", str(source), "--customer-id", "acme", "--no-progress", stdout=io.StringIO()
        )
    rejected = [json.loads(x) for x in (tmp_path / "decisions.jsonl.rejected.jsonl").open()]
    assert [(r["line"], r["error"]["code"]) for r in rejected] == [(2, "INVALID_JSON")]
    assert "duplicate key" in json.dumps(rejected[0])
    for decision_id in ("i-1", "i-3"):
        confidence = Decision.objects.get(customer_id="acme", decision_id=decision_id).ai_confidence
        assert confidence == 0.0 and json.dumps(confidence) == "0.0"
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
