"""Erasure and retention that keep the chain verifiable (docs/reference/erasure.md): the
personal part of format-2 entries is erased, the chain, the tree and every earlier checkpoint
still verify (online, and offline by the auditor's command in a fresh interpreter), the erased
values appear nowhere, an unerased entry whose personal field changes fails, the commitment of
an erased entry cannot be brute-forced, and the policy's rules hold."""

import datetime as dt
import hashlib
import hmac
import io
import json
import subprocess
from pathlib import Path

import pytest
import rfc8785
from django.db import connection
from django.utils import timezone

from audit import erasure as erasures
from audit import verify
from audit.models import AuditEntry, Decision, Erasure
from calibration.models import UserDailyAggregate
from tests.audit.factories import all_entries, decision_body, recompute_hash
from tests.audit.test_checkpoint_tamper import offline
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

SUBJECT = "subj-7f3e9a-unique-erasure-value"
CONTEXT = "context-naming-subj-7f3e9a"
REVIEWER = "reviewer-c41d-unique"


def _log(api, n: int = 1, **fields) -> None:
    items = [decision_body(**fields) for _ in range(n)]
    response = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert response.status_code == 200 and response.json()["rejected"] == 0, response.content


def _checkpoint(api, tmp_path) -> tuple[str, str]:
    made = api.post("/v1/audit-trail/checkpoints").json()
    note = tmp_path / f"checkpoint-{made['sequence']}.json"
    note.write_text(json.dumps(made))
    key = tmp_path / "key.txt"
    key.write_text(api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"])
    return str(key), str(note)


def _export(api, tmp_path) -> str:
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    return str(path)


def _erase(api, **body):
    body.setdefault("reason", "the data subject asked")
    body.setdefault("legal_basis", "gdpr_art_17_1_a")
    body.setdefault("override_minimum", True)
    return api.post("/v1/erasures", body, format="json")


def _full_check(api) -> dict:
    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify.verify_job_run(job_id=job["job_id"])
    return api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()["result"]


def _dump() -> str:
    """Every table of the database as text (sqlite3's .dump, or pg_dump)."""
    if connection.vendor == "sqlite":
        return "\n".join(connection.connection.iterdump())
    settings = connection.settings_dict
    done = subprocess.run(
        ["pg_dump", "-h", settings["HOST"] or "127.0.0.1", "-p", str(settings["PORT"] or 5432),
         "-U", settings["USER"], "--data-only", settings["NAME"]],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def test_erasing_a_subject_keeps_chain_tree_and_earlier_checkpoints_valid_and_leaves_no_trace(api, tmp_path):
    _log(api, 3, user_id="alice")
    _log(api, 2, user_id="alice", subject_id=SUBJECT, context=CONTEXT, subgroups={"gender": "f"})
    _log(api, 2, user_id="bob")
    key, before = _checkpoint(api, tmp_path)
    api.get("/v1/audit-trail/verify")  # the checked-through point, before the erasure
    figures = sorted(UserDailyAggregate.objects.values_list("user_id", "n", "conf_sum"))
    body = _erase(api, subject_id=SUBJECT)
    assert body.status_code == 202, body.content
    erased = body.json()
    assert erased["status"] == "completed" and erased["entries"] == 2 and erased["sequences"] == [[4, 5]]
    assert erased["entry_sequence"] == 8 and erased["erasure_id"].startswith("era_")
    # online: incremental and full, the earlier checkpoint included
    answer = api.get("/v1/audit-trail/verify").json()
    assert answer["valid"] is True and answer["erased_entries"] == 2 and answer["checkpoints_checked"] >= 1
    result = _full_check(api)
    assert result["valid"] is True and result["first_invalid_checkpoint"] is None
    # offline, against the checkpoint signed before the erasure and one signed after
    _, after = _checkpoint(api, tmp_path)
    code, out = offline("--key", key, "--checkpoint", before, "--checkpoint", after, _export(api, tmp_path))
    assert code == 0, out
    assert "OK: 8 entries" in out and "2 entries had their personal fields erased" in out
    # what the API shows
    entries = all_entries(api)
    for entry in entries:
        assert recompute_hash(entry) == entry["hash"]
    shown = {e["sequence"]: e for e in entries}
    assert shown[4]["erased"] is True and shown[4]["personal_fields"] is None and shown[4]["salt"] is None
    assert shown[4]["user_id"] is None and shown[4]["subject_id"] is None
    assert shown[8]["type"] == "erasure" and shown[8]["sequences"] == [[4, 5]]
    assert shown[8]["legal_basis"] == "gdpr_art_17_1_a" and "personal" not in shown[8]
    # the organisation's figures are unchanged
    assert sorted(UserDailyAggregate.objects.values_list("user_id", "n", "conf_sum")) == figures
    # nowhere: API answers, the export, stored events, the database
    exported = Path(_export(api, tmp_path)).read_text(encoding="utf-8")
    for text in (json.dumps(entries), exported, _dump()):
        assert SUBJECT not in text and CONTEXT not in text
    listed = api.get("/v1/erasures").json()["data"]
    assert [e["erasure_id"] for e in listed] == [erased["erasure_id"]]
    assert api.get(f"/v1/erasures/{erased['erasure_id']}").json()["entries"] == 2


def test_erasing_a_reviewer_rekeys_their_figures_to_a_pseudonym(api, tmp_path):
    _log(api, 3, user_id=REVIEWER)
    _log(api, 2, user_id="bob")
    before = sorted(UserDailyAggregate.objects.filter(user_id=REVIEWER).values_list("day", "n", "conf_sum"))
    response = _erase(api, user_id=REVIEWER, legal_basis="gdpr_art_17_1_b")
    assert response.status_code == 202
    pseudonym = response.json()["pseudonym"]
    assert pseudonym.startswith("erased:") and len(pseudonym) == len("erased:") + 8
    assert (
        sorted(UserDailyAggregate.objects.filter(user_id=pseudonym).values_list("day", "n", "conf_sum"))
        == before
    )
    assert not Decision.objects.filter(user_id=REVIEWER).exists()
    assert Decision.objects.filter(user_id=pseudonym).count() == 3
    assert REVIEWER not in _dump()
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    # the same request again erases nothing more and says so
    again = _erase(api, user_id=REVIEWER, legal_basis="gdpr_art_17_1_b")
    assert again.status_code == 200 and again.json()["repeated"] is True
    assert again.json()["erasure_id"] == response.json()["erasure_id"]
    assert AuditEntry.objects.filter(type="erasure").count() == 1


def test_a_changed_personal_field_of_an_unerased_entry_fails_online_and_offline(api, tmp_path):
    _log(api, 3, user_id="alice", subject_id="s-1")
    key, note = _checkpoint(api, tmp_path)
    AuditEntry.objects.filter(sequence=2).update(user_id="mallory")
    result = _full_check(api)
    assert result["valid"] is False and result["first_invalid_sequence"] == 2
    code, out = offline("--key", key, "--checkpoint", note, _export(api, tmp_path))
    assert code == 1 and "sequence 2" in out and "commitment" in out


def test_an_erased_commitment_cannot_be_found_by_trying_every_low_entropy_value(api):
    _log(api, 1, user_id="u", subject_id="s", context="", subgroups={"gender": "f", "age_group": "18-30"})
    entry = all_entries(api)[0]
    assert _erase(api, subject_id="s").status_code == 202
    erased = all_entries(api)[0]
    assert erased["erased"] is True and erased["personal"] == entry["personal"]
    # without the salt every guess fails, even knowing every other field exactly
    hits = 0
    for gender in ("f", "m", "x", "female", "male", "other", None):
        for age in ("18-30", "31-45", "46-60", "60+", None):
            groups = {k: v for k, v in (("gender", gender), ("age_group", age)) if v is not None}
            guess = rfc8785.dumps({"context": "", "subgroups": groups, "subject_id": "s", "user_id": "u"})
            for salt in (b"", b"\0" * 32, hashlib.sha256(b"s").digest()):
                hits += hmac.new(salt, guess, hashlib.sha256).hexdigest() == erased["personal"]
            hits += hashlib.sha256(guess).hexdigest() == erased["personal"]
    assert hits == 0
    # while the salt existed, the right value did match (the test can tell a hit)
    truth = rfc8785.dumps(entry["personal_fields"])
    assert hmac.new(bytes.fromhex(entry["salt"]), truth, hashlib.sha256).hexdigest() == entry["personal"]


def test_legal_hold_refuses_and_records_minimum_schedules_and_maximum_erases(api, other_api):
    assert api.get("/v1/retention-policy").json() == {"min_days": 183, "max_days": None, "legal_hold": False}
    bad = api.put("/v1/retention-policy", {"min_days": 30}, format="json")
    assert_problem(bad, 400, "VALIDATION_ERROR")
    assert_problem(_erase(api, subject_id="a", user_id="b"), 400, "VALIDATION_ERROR")
    assert_problem(_erase(api, subject_id="a", legal_basis="because"), 400, "VALIDATION_ERROR")
    _log(api, 2, subject_id="held")
    api.put("/v1/retention-policy", {"legal_hold": True}, format="json")
    assert_problem(_erase(api, subject_id="held"), 409, "ERASURE_LEGAL_HOLD")
    refused = Erasure.objects.get(customer_id="acme")
    assert refused.status == "refused" and refused.pending_value is None
    assert not AuditEntry.objects.filter(erased=True).exists()
    # the minimum: scheduled until the entries are old enough, then run by the due job
    api.put("/v1/retention-policy", {"min_days": 200, "max_days": 400}, format="json")
    scheduled = _erase(api, subject_id="held", override_minimum=False).json()
    assert scheduled["status"] == "scheduled" and scheduled["entries"] == 2
    assert not AuditEntry.objects.filter(erased=True).exists()
    erasures.erasures_run_due(now=timezone.now() + dt.timedelta(days=201))
    done = api.get(f"/v1/erasures/{scheduled['erasure_id']}").json()
    assert done["status"] == "completed" and done["entries"] == 2
    assert Erasure.objects.get(pk=scheduled["erasure_id"]).pending_value is None
    # the maximum: the daily run erases what is older, one entry per run, basis retention_expired
    _log(api, 2, subject_id="old")
    erasures.erasures_run_due(now=timezone.now() + dt.timedelta(days=401))
    run = Erasure.objects.filter(legal_basis="retention_expired").get()
    assert run.entries == 2 and AuditEntry.objects.filter(erased=True).count() == 4
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    # tenancy
    assert other_api.get(f"/v1/erasures/{run.pk}").status_code == 404
    assert other_api.get("/v1/erasures").json()["data"] == []


def test_the_offline_verifier_counts_erased_entries_in_one_process_too(api, tmp_path):
    _log(api, 2, subject_id="s-2")
    assert _erase(api, subject_id="s-2").status_code == 202
    key, note = _checkpoint(api, tmp_path)
    from audit import offline_verify

    out = io.StringIO()
    assert (
        offline_verify.main(
            ["--key", key, "--checkpoint", note, "--jobs", "1", _export(api, tmp_path)], out=out
        )
        == 0
    )
    assert "2 entries had their personal fields erased" in out.getvalue()
