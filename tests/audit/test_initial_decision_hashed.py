"""`initial_decision` is in the canonical text of every entry appended now (docs/reference/decisions.md,
"What the hash covers"): a changed byte of it fails verification, online and offline; entries
written before, whose canonical text holds no such key, still verify (the chain, a full check,
a checkpoint signed over them, an inclusion proof and the offline verifier of the export)."""

import json

import pytest

from audit import tree
from audit import verify as verify_module
from audit.models import AuditEntry, ChainHead, Decision
from tests.audit.factories import decision_body, recompute_hash
from tests.audit.tamper import rehash
from tests.audit.test_checkpoint_tamper import export, offline, verify

pytestmark = pytest.mark.django_db


def _full_check(api) -> dict:
    """GET /audit-trail/verify?full=true, its job run here, and its result."""
    from config.celery import app

    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    app.conf.task_always_eager = True
    try:
        verify_module.verify_job_run(job_id=job["job_id"])
    finally:
        app.conf.task_always_eager = False
    return api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()["result"]


def _signed(api, tmp_path):
    """A checkpoint of the chain as it stands, and the verifier key, as the auditor keeps them."""
    api.post("/v1/audit-trail/checkpoints")
    note_file = tmp_path / "checkpoint.txt"
    note_file.write_bytes(api.get("/v1/audit-trail/checkpoints/latest", HTTP_ACCEPT="text/plain").content)
    key_file = tmp_path / "key.json"
    key_file.write_bytes(api.get("/v1/audit-trail/checkpoint-key").content)
    return note_file, key_file


def _entries(api) -> list[dict]:
    return sorted(api.get("/v1/audit-trail", {"limit": 100}).json()["data"], key=lambda e: e["sequence"])


def test_a_new_entry_carries_initial_decision_in_its_canonical_text(api):
    api.post("/v1/log", decision_body(decision_id="with", initial_decision="deny"), format="json")
    api.post("/v1/log", decision_body(decision_id="without"), format="json")
    api.post("/v1/log", {"decision_id": "with", "outcome": "approve"}, format="json")
    with_, without, outcome = _entries(api)
    assert json.loads(with_["canonical"])["initial_decision"] == "deny"
    assert with_["initial_decision"] == "deny"
    assert json.loads(without["canonical"])["initial_decision"] is None  # the key, null: the new form
    assert without["initial_decision"] is None
    assert outcome["type"] == "outcome" and json.loads(outcome["canonical"])["initial_decision"] == "deny"
    assert all(recompute_hash(entry) == entry["hash"] for entry in (with_, without, outcome))
    assert verify(api)["valid"]


def test_a_changed_initial_decision_byte_fails_verification_online_and_offline(api, tmp_path):
    api.post(
        "/v1/log/batch",
        {"decisions": [decision_body(initial_decision="deny") for _ in range(4)]},
        format="json",
    )
    note_file, key_file = _signed(api, tmp_path)
    entry = AuditEntry.objects.get(customer_id="acme", sequence=2)
    AuditEntry.objects.filter(pk=entry.pk).update(
        canonical=entry.canonical.replace('"initial_decision":"deny"', '"initial_decision":"deny."')
    )
    body = verify(api)
    assert not body["valid"] and body["first_invalid_sequence"] == 2
    code, out = offline("--key", str(key_file), "--checkpoint", str(note_file), str(export(api, tmp_path)))
    assert code == 1 and "sequence 2" in out and "does not match its hash" in out


def test_a_changed_initial_decision_in_the_column_or_the_decision_row_fails_verification(api):
    api.post(
        "/v1/log/batch",
        {"decisions": [decision_body(initial_decision="deny") for _ in range(3)]},
        format="json",
    )
    AuditEntry.objects.filter(customer_id="acme", sequence=2).update(initial_decision="approve")
    body = verify(api)
    assert not body["valid"] and body["first_invalid_sequence"] == 2
    AuditEntry.objects.filter(customer_id="acme", sequence=2).update(initial_decision="deny")
    assert verify(api)["valid"]
    third = AuditEntry.objects.get(customer_id="acme", sequence=3)
    Decision.objects.filter(pk=third.decision_id).update(initial_decision=None)
    body = _full_check(api)
    assert not body["valid"] and body["first_invalid_sequence"] == 3


def _as_written_before(customer_id: str, through: int) -> None:
    """Entries 1..through as the service wrote them before initial_decision was hashed: no such
    key in their canonical text (their decision rows keep the initial decision), every later hash
    recomputed, the head and the tree to match."""
    entries = list(AuditEntry.objects.filter(customer_id=customer_id).order_by("sequence"))
    previous = entries[0].previous_hash
    for entry in entries:
        if entry.sequence <= through:
            inner = json.loads(entry.canonical)
            del inner["initial_decision"]
            entry.canonical = json.dumps(inner)
            entry.initial_decision = None
        rehash(entry, previous)
        previous = entry.hash
        entry.save()
    ChainHead.objects.filter(customer_id=customer_id).update(head_hash=previous)
    tree.tree_rebuild(customer_id, len(entries))


def test_entries_written_before_still_verify_with_checkpoints_proofs_and_the_export(api, tmp_path):
    api.post(
        "/v1/log/batch",
        {"decisions": [decision_body(initial_decision="deny") for _ in range(4)]},
        format="json",
    )
    _as_written_before("acme", through=4)
    old = _entries(api)
    assert all(
        "initial_decision" not in json.loads(e["canonical"]) and "initial_decision" not in e for e in old
    )
    assert Decision.objects.filter(customer_id="acme", initial_decision="deny").count() == 4
    # New entries after them carry the key; the mixed chain verifies.
    api.post(
        "/v1/log/batch",
        {"decisions": [decision_body(initial_decision="deny") for _ in range(4)]},
        format="json",
    )
    entries = _entries(api)
    assert ["initial_decision" in json.loads(e["canonical"]) for e in entries] == [False] * 4 + [True] * 4
    assert all(recompute_hash(entry) == entry["hash"] for entry in entries)
    assert verify(api)["valid"]
    assert _full_check(api)["valid"]
    # A checkpoint signed over both forms, an inclusion proof of an old entry, the offline check.
    note_file, key_file = _signed(api, tmp_path)
    body = verify(api)
    assert body["valid"] and body["checkpoints_checked"] == 1
    proof = api.get("/v1/audit-trail/proofs/inclusion", {"sequence": 2, "tree_size": 8})
    assert proof.status_code == 200, proof.json()
    code, out = offline("--key", str(key_file), "--checkpoint", str(note_file), str(export(api, tmp_path)))
    assert code == 0, out


def test_a_large_batch_stores_and_hashes_every_initial_decision(api):
    """Over the size where PostgreSQL COPYs a batch: every item stored, each entry's text holds it."""
    items = [decision_body(initial_decision="deny" if i % 2 else "approve") for i in range(120)]
    response = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert response.status_code == 200 and response.json()["rejected"] == 0, response.content
    stored = dict(Decision.objects.filter(customer_id="acme").values_list("decision_id", "initial_decision"))
    assert stored == {item["decision_id"]: item["initial_decision"] for item in items}
    texts = AuditEntry.objects.filter(customer_id="acme").values_list("canonical", flat=True)
    assert sorted('"initial_decision":"deny"' in text for text in texts) == [False] * 60 + [True] * 60
    assert verify(api)["valid"] is True
