"""Rewritten history is caught against an earlier checkpoint, both by GET /audit-trail/verify
and by the offline verifier an auditor runs (a separate Python process with no Django and no
database): one stored entry edited, the last entry deleted, the whole chain rewritten with
recomputed hashes (and a recomputed tree). An entry alone is checked with its inclusion
proof. The audit.checkpoint event reaches a webhook and verifies with standardwebhooks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from standardwebhooks import Webhook as Verifier

from audit.models import AuditEntry, ChainHead
from keys.models import Customer
from tests.audit.factories import decision_body
from tests.audit.tamper import rewrite_chain
from tests.webhooks.receiver import Receiver, start
from webhooks import dispatch, services
from webhooks.models import Event

pytestmark = pytest.mark.django_db

REPO = Path(settings.BASE_DIR)


def offline(*args: str) -> tuple[int, str]:
    """The auditor's command, run from the repository root in a fresh interpreter."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "audit.offline_verify", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def signed(api, tmp_path):
    """Eight entries, a checkpoint of them the auditor kept, the key, the export as it was."""
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(8)]}, format="json")
    api.post("/v1/audit-trail/checkpoints")
    note_file = tmp_path / "checkpoint.txt"
    note_file.write_bytes(api.get("/v1/audit-trail/checkpoints/latest", HTTP_ACCEPT="text/plain").content)
    key_file = tmp_path / "key.json"
    key_file.write_bytes(api.get("/v1/audit-trail/checkpoint-key").content)
    return note_file, key_file


def export(api, tmp_path: Path, name: str = "export.ndjson") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    return path


def verify(api) -> dict:
    return api.get("/v1/audit-trail/verify").json()


def test_an_untouched_trail_verifies_online_and_offline_without_django(api, signed, tmp_path):
    note_file, key_file = signed
    api.post("/v1/log", decision_body(), format="json")  # one entry after the checkpoint
    body = verify(api)
    assert body["valid"] and body["checkpoints_checked"] == 1 and body["first_invalid_checkpoint"] is None
    code, out = offline("--key", str(key_file), "--checkpoint", str(note_file), str(export(api, tmp_path)))
    assert code == 0, out
    assert "OK: 9 entries of trustcal.local/acme" in out and "checkpoint of 8 entries" in out
    assert "entries 9..9 are chained but no checkpoint given here covers them" in out
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, audit.offline_verify; print('django' in sys.modules)"],
        cwd=REPO,
        env={"PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "False"


def test_editing_one_stored_entry_is_caught(api, signed, tmp_path):
    note_file, key_file = signed
    AuditEntry.objects.filter(customer_id="acme", sequence=3).update(context="edited afterwards")
    body = verify(api)
    assert not body["valid"] and body["first_invalid_sequence"] == 3
    exported = str(export(api, tmp_path))
    for jobs in ("1", "2"):  # in one process, and spread over worker processes
        code, out = offline("--key", str(key_file), "--checkpoint", str(note_file), "--jobs", jobs, exported)
        assert code == 1 and "line 3 (sequence 3)" in out and "does not match its hash" in out


def test_deleting_the_last_entry_is_caught(api, signed, tmp_path):
    note_file, key_file = signed
    last = AuditEntry.objects.get(customer_id="acme", sequence=8)
    last.delete()
    ChainHead.objects.filter(customer_id="acme").update(sequence=7, head_hash=last.previous_hash)
    body = verify(api)
    assert (
        not body["valid"] and body["first_invalid_checkpoint"] == 8 and body["first_invalid_sequence"] is None
    )
    code, out = offline("--key", str(key_file), "--checkpoint", str(note_file), str(export(api, tmp_path)))
    assert code == 1 and "export ends after 7 entries" in out and "covers 8" in out


def test_rewriting_the_whole_chain_with_recomputed_hashes_is_caught(api, signed, tmp_path):
    note_file, key_file = signed
    rewrite_chain("acme", from_sequence=2)
    body = verify(api)
    assert body["first_invalid_sequence"] is None  # the chain alone looks fine
    assert not body["valid"] and body["first_invalid_checkpoint"] == 8
    code, out = offline("--key", str(key_file), "--checkpoint", str(note_file), str(export(api, tmp_path)))
    assert code == 1 and "history was rewritten" in out
    # Nor will the service sign the rewritten tree.
    api.post("/v1/log", decision_body(), format="json")
    refused = api.post("/v1/audit-trail/checkpoints")
    assert refused.status_code == 409 and refused.json()["code"] == "TREE_NOT_EXTENSION"


def test_a_note_signed_by_another_key_or_edited_is_refused_offline(api, signed, tmp_path):
    note_file, key_file = signed
    exported = export(api, tmp_path)
    other = tmp_path / "other-key.txt"
    other.write_text("trustcal.local+00000000+AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n")
    assert offline("--key", str(other), "--checkpoint", str(note_file), str(exported))[0] == 2
    forged = tmp_path / "forged.txt"
    forged.write_text(note_file.read_text().replace("\n8\n", "\n7\n"))
    code, out = offline("--key", str(key_file), "--checkpoint", str(forged), str(exported))
    assert code == 1 and "NOT signed by" in out


def test_one_entry_is_checked_alone_with_its_inclusion_proof(api, signed, tmp_path):
    note_file, key_file = signed
    entry = api.get("/v1/audit-trail", {"limit": 100}).json()["data"][-3]  # sequence 3
    (tmp_path / "entry.json").write_text(json.dumps(entry))
    proof = api.get(f"/v1/audit-trail/proofs/inclusion?sequence={entry['sequence']}&tree_size=8").content
    (tmp_path / "proof.json").write_bytes(proof)
    args = ["--key", str(key_file), "--checkpoint", str(note_file)]
    entry_args = ["--entry", str(tmp_path / "entry.json"), "--proof", str(tmp_path / "proof.json")]
    code, out = offline(*args, *entry_args)
    assert code == 0 and f"OK: entry {entry['sequence']}" in out, out
    (tmp_path / "entry.json").write_text(json.dumps({**entry, "context": "changed"}))
    assert offline(*args, *entry_args)[0] == 1
    wrong = json.loads(proof)
    wrong["hashes"][0] = wrong["hashes"][1]
    (tmp_path / "entry.json").write_text(json.dumps(entry))
    (tmp_path / "proof.json").write_text(json.dumps(wrong))
    code, out = offline(*args, *entry_args)
    assert code == 1 and "is NOT in the tree" in out


def test_the_checkpoint_event_is_delivered_and_verifies_with_standardwebhooks(api, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_DISPATCH_THREADS = 1
    receiver = Receiver()
    server, _ = start(receiver)
    try:
        issued = services.webhook_create(
            customer=Customer(pk="acme"), url=receiver.url, events=["audit.checkpoint"]
        )
        api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(3)]}, format="json")
        made = api.post("/v1/audit-trail/checkpoints").json()
        assert dispatch.deliveries_dispatch_due() == 1
        body = Verifier(issued.secret).verify(receiver.requests[0].body, receiver.requests[0].headers)
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()
    assert body["type"] == "audit.checkpoint" and body["customer_id"] == "acme"
    data = body["data"]
    assert data["sequence"] == 3 and data["note"] == made["note"]
    assert data["head_hash"] == made["head_hash"] and data["root_hash"] == made["root_hash"]
    assert Event.objects.get(type="audit.checkpoint").data == data


def test_the_offline_verifier_accepts_entries_with_awkward_values(api, tmp_path):
    odd = [
        decision_body(ai_confidence=1.0, context='say "hi"\nthen \\ leave \u2028 ünïcode ✓'),
        decision_body(ai_confidence=0.0, subgroups={"gender": "f", "custom": {"région": "Île"}}),
        decision_body(ai_confidence=None, model_id=None),
    ]
    assert api.post("/v1/log/batch", {"decisions": odd}, format="json").json()["rejected"] == 0
    made = api.post("/v1/audit-trail/checkpoints").json()
    (tmp_path / "checkpoint.json").write_text(json.dumps(made))
    (tmp_path / "key.txt").write_text(api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"])
    code, out = offline("--key", str(tmp_path / "key.txt"), "--checkpoint", str(tmp_path / "checkpoint.json"),
                        str(export(api, tmp_path)))  # fmt: skip
    assert code == 0 and "OK: 3 entries" in out, out
