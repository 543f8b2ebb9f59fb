"""Signed checkpoints over HTTP (docs/reference/checkpoints.md): made on request, every 1,000
entries (a batch crossing a multiple makes one) and hourly while a chain grows; listed,
latest as JSON or the note alone; the public key; each checkpoint's size and root equal the
tree recomputed here; tenant isolation; the key file; the NDJSON export."""

import base64
import datetime as dt
import hashlib
import json
import os
import stat

import pytest
import time_machine
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from audit import checkpoint_key, checkpoints
from audit.models import SignedCheckpoint
from tests.audit.factories import all_entries, decision_body, recompute_hash
from tests.audit.test_merkle_proofs import rfc_mth
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def log_batch(api, count: int) -> None:
    response = api.post(
        "/v1/log/batch", {"decisions": [decision_body() for _ in range(count)]}, format="json"
    )
    assert response.status_code == 200, response.content


def independent_check(note_text: str, verifier_key: str) -> tuple[str, int, bytes, list[str]]:
    """Parse and verify a note with nothing but the formats' text and an Ed25519 check."""
    name, key_hex, key_b64 = verifier_key.split("+", 2)
    raw_key = base64.b64decode(key_b64)
    assert raw_key[0] == 1 and len(raw_key) == 33
    assert hashlib.sha256(name.encode() + b"\n" + raw_key).digest()[:4].hex() == key_hex
    text, signature_line = note_text.rsplit("\n\n", 1)
    text += "\n"
    assert signature_line.startswith(f"— {name} ") and signature_line.endswith("\n")
    signature = base64.b64decode(signature_line.removeprefix(f"— {name} ").rstrip("\n"))
    assert signature[:4].hex() == key_hex
    Ed25519PublicKey.from_public_bytes(raw_key[1:]).verify(signature[4:], text.encode())
    origin, size, root, *extensions = text.rstrip("\n").split("\n")
    return origin, int(size), base64.b64decode(root), extensions


def test_a_checkpoint_on_request_signs_the_tree_recomputed_here(api, anon_api):
    log_batch(api, 7)
    made = api.post("/v1/audit-trail/checkpoints")
    assert made.status_code == 201
    body = made.json()
    entries = all_entries(api)
    leaves = [bytes.fromhex(entry["hash"]) for entry in entries]
    assert body["checkpoint_id"].startswith("chk_") and body["created_at"].endswith("Z")
    assert body["sequence"] == 7 and body["head_hash"] == entries[-1]["hash"]
    assert body["root_hash"] == rfc_mth(leaves).hex()
    key = anon_api.get("/v1/audit-trail/checkpoint-key")  # public: no key needed
    assert key.status_code == 200
    key_body = key.json()
    assert key_body["origin"] == "trustcal.local" and key_body["algorithm"] == "ed25519"
    assert (
        base64.b64decode(key_body["public_key"])
        == base64.b64decode(key_body["verifier_key"].split("+", 2)[2])[1:]
    )
    origin, size, root, extensions = independent_check(body["note"], key_body["verifier_key"])
    assert (origin, size, root) == ("trustcal.local/acme", 7, rfc_mth(leaves))
    assert extensions == [f"time {body['created_at']}"]
    # Not grown since: 200 with the same checkpoint.
    again = api.post("/v1/audit-trail/checkpoints")
    assert again.status_code == 200 and again.json() == body


def test_latest_as_json_or_the_note_alone_and_the_list_newest_first(api):
    assert api.get("/v1/audit-trail/checkpoints/latest").status_code == 404
    assert api.post("/v1/audit-trail/checkpoints").status_code == 404  # nothing to sign yet
    log_batch(api, 2)
    first = api.post("/v1/audit-trail/checkpoints").json()
    log_batch(api, 3)
    second = api.post("/v1/audit-trail/checkpoints").json()
    latest = api.get("/v1/audit-trail/checkpoints/latest")
    assert latest.json() == second
    text = api.get("/v1/audit-trail/checkpoints/latest", HTTP_ACCEPT="text/plain")
    assert text.status_code == 200 and text["Content-Type"].startswith("text/plain")
    assert text.content.decode() == second["note"]
    listed = api.get("/v1/audit-trail/checkpoints?limit=1").json()
    assert listed["data"] == [second] and listed["pagination"]["total"] == 2
    assert api.get("/v1/audit-trail/checkpoints?page=2&limit=1").json()["data"] == [first]
    assert api.get("/v1/audit-trail/checkpoints?limit=0").status_code == 400


def test_a_batch_crossing_a_multiple_of_1000_makes_one_checkpoint_at_its_end(api, worker_signs):
    with worker_signs():
        log_batch(api, 600)
    assert not SignedCheckpoint.objects.exists()
    with worker_signs():
        log_batch(api, 600)  # 601..1200 crosses 1000
    assert list(SignedCheckpoint.objects.values_list("sequence", flat=True)) == [1200]
    with worker_signs():
        log_batch(api, 800)  # 1201..2000 reaches 2000
    assert sorted(SignedCheckpoint.objects.values_list("sequence", flat=True)) == [1200, 2000]
    leaves = [bytes.fromhex(entry["hash"]) for entry in all_entries(api)]
    for checkpoint in SignedCheckpoint.objects.all():
        assert checkpoint.root_hash == rfc_mth(leaves[: checkpoint.sequence]).hex()
    assert Event.objects.filter(type="audit.checkpoint").count() == 2


def test_single_appends_reaching_1000_make_one(api, worker_signs):
    with worker_signs():
        log_batch(api, 999)
    assert not SignedCheckpoint.objects.exists()
    with worker_signs():
        assert api.post("/v1/log", decision_body(), format="json").status_code == 201
    assert list(SignedCheckpoint.objects.values_list("sequence", flat=True)) == [1000]


def test_hourly_while_a_chain_grows_and_not_when_it_does_not(api):
    start = dt.datetime.now(dt.UTC)
    log_batch(api, 3)
    assert checkpoints.checkpoints_make_due() == 1  # a chain no checkpoint covers yet
    assert checkpoints.checkpoints_make_due() == 0  # not grown since
    log_batch(api, 1)
    with time_machine.travel(start + dt.timedelta(minutes=50)):
        assert checkpoints.checkpoints_make_due() == 0  # the newest is under an hour old
    with time_machine.travel(start + dt.timedelta(minutes=61)):
        assert checkpoints.checkpoints_make_due() == 1
        assert checkpoints.checkpoints_make_due() == 0
    with time_machine.travel(start + dt.timedelta(minutes=200)):
        assert checkpoints.checkpoints_make_due() == 0  # hours pass, but the chain did not grow
    assert sorted(SignedCheckpoint.objects.values_list("sequence", flat=True)) == [3, 4]


def test_another_customer_never_sees_checkpoints_or_export(api, other_api):
    log_batch(api, 3)
    api.post("/v1/audit-trail/checkpoints")
    assert other_api.get("/v1/audit-trail/checkpoints").json()["data"] == []
    assert other_api.get("/v1/audit-trail/checkpoints/latest").status_code == 404
    assert b"".join(other_api.get("/v1/audit-trail/export").streaming_content) == b""
    assert other_api.post("/v1/audit-trail/checkpoints").status_code == 404
    assert SignedCheckpoint.objects.filter(customer_id="globex").count() == 0


def test_the_export_is_every_entry_in_order_and_recomputes_from_line_1(api):
    log_batch(api, 5)
    api.post(
        "/v1/log", {"decision_id": all_entries(api)[0]["decision_id"], "outcome": "approve"}, format="json"
    )
    response = api.get("/v1/audit-trail/export")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert lines == all_entries(api)
    previous = "0" * 64
    for line in lines:
        assert line["previous_hash"] == previous and recompute_hash(line) == line["hash"]
        previous = line["hash"]
    part = b"".join(api.get("/v1/audit-trail/export?from_sequence=2&to_sequence=4").streaming_content)
    assert [json.loads(line)["sequence"] for line in part.decode().splitlines()] == [2, 3, 4]
    assert api.get("/v1/audit-trail/export?from_sequence=4&to_sequence=2").status_code == 400
    assert api.get("/v1/audit-trail/export?from_sequence=0").status_code == 400


def test_exported_lines_parse_to_the_hashed_entries_whatever_their_values(api):
    """Confidences that are whole numbers (1.0, 0.0; RFC 8785 writes them 1 and 0), strings keep quotes, newlines
    and non-ASCII, subgroups nest: every line parses to the entry and recomputes its hash."""
    odd = [
        decision_body(
            ai_confidence=1.0,
            context='say "hi"\nthen \\ leave',
            subgroups={"gender": "f", "custom": {"région": "Île"}},
        ),
        decision_body(ai_confidence=0.0, context="tab\there \u2028 ünïcode ✓"),
        decision_body(ai_confidence=1e-05),
        decision_body(ai_confidence=None, model_id=None, subgroups={}),
        decision_body(ai_confidence=0.123456789012345),
    ]
    log_batch_items = api.post("/v1/log/batch", {"decisions": odd}, format="json")
    assert log_batch_items.status_code == 200 and log_batch_items.json()["rejected"] == 0, (
        log_batch_items.json()["results"][0]
    )
    body = b"".join(api.get("/v1/audit-trail/export").streaming_content).decode()
    parsed = [json.loads(line) for line in body.split("\n")[:-1]]  # U+2028 stays inside its line
    assert parsed == all_entries(api)
    for entry in parsed:
        assert recompute_hash(entry) == entry["hash"]
    assert parsed[0]["ai_confidence"] == 1.0 and parsed[1]["ai_confidence"] == 0.0  # RFC 8785 writes 1 and 0


def test_the_embedded_key_is_generated_on_first_use_owner_only(settings, key_path, anon_api):
    settings.TRUSTCAL_CHECKPOINT_KEY = ""
    settings.TRUSTCAL_CHECKPOINT_KEY_DEFAULT = key_path / "data" / "checkpoint.pem"
    assert not settings.TRUSTCAL_CHECKPOINT_KEY_DEFAULT.exists()
    first = anon_api.get("/v1/audit-trail/checkpoint-key").json()
    mode = stat.S_IMODE(os.stat(settings.TRUSTCAL_CHECKPOINT_KEY_DEFAULT).st_mode)
    assert mode == 0o600
    checkpoint_key.signing_key.cache_clear()
    assert anon_api.get("/v1/audit-trail/checkpoint-key").json() == first  # the same key, reread


def test_a_configured_key_file_pem_or_seed_is_used_and_never_generated(settings, key_path, anon_api):
    key = Ed25519PrivateKey.generate()
    seed = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = base64.b64encode(key.public_key().public_bytes_raw()).decode()
    (key_path / "seed").write_text(base64.b64encode(seed).decode() + "\n")
    (key_path / "pem").write_bytes(pem)
    for name in ("seed", "pem"):
        settings.TRUSTCAL_CHECKPOINT_KEY = str(key_path / name)
        checkpoint_key.signing_key.cache_clear()
        assert anon_api.get("/v1/audit-trail/checkpoint-key").json()["public_key"] == public
    settings.TRUSTCAL_CHECKPOINT_KEY = str(key_path / "missing")
    checkpoint_key.signing_key.cache_clear()
    with pytest.raises(checkpoints.CheckpointKeyError) as caught:
        checkpoint_key.signing_key()
    assert not (key_path / "missing").exists()
    assert base64.b64encode(seed).decode() not in str(caught.value)


def test_a_custom_origin_names_the_key_and_prefixes_the_customer(settings, key_path, api):
    settings.TRUSTCAL_LOG_ORIGIN = "audit.example.com/trustcal"
    log_batch(api, 1)
    body = api.post("/v1/audit-trail/checkpoints").json()
    vkey = api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"]
    assert vkey.startswith("audit.example.com/trustcal+")
    assert independent_check(body["note"], vkey)[0] == "audit.example.com/trustcal/acme"
