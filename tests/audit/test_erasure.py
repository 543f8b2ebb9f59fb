"""Erasure and retention that keep the chain verifiable (docs/reference/erasure.md): the
personal part of format-2 entries is erased, the chain, the tree and every earlier checkpoint
still verify (online, and offline by the auditor's command in a fresh interpreter), the
organisation's figures keep their values, an unerased entry whose personal field changes fails,
the commitment of an erased entry cannot be brute-forced, and the policy's rules hold. That the
erased values appear nowhere: test_erasure_no_trace.py."""

import datetime as dt
import hashlib
import hmac
import io
import json
from pathlib import Path

import pytest
import rfc8785
from django.utils import timezone

from audit import erasure as erasures
from audit.models import AuditEntry, Decision, Erasure
from bias.models import SubgroupAttachment
from calibration.models import UserDailyAggregate
from tests.audit.erasure_helpers import (
    REVIEWER,
    checkpoint,
    dump,
    erase,
    export,
    figures,
    full_check,
    log,
    subject_erased,
)
from tests.audit.factories import all_entries, recompute_hash
from tests.audit.test_checkpoint_tamper import offline
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db


def test_erasing_a_subject_keeps_chain_tree_and_earlier_checkpoints_valid_online(api, tmp_path):
    erased = subject_erased(api, tmp_path).answer
    assert erased["status"] == "completed" and erased["entries"] == 4 and erased["sequences"] == [[4, 7]]
    assert erased["entry_sequence"] == 10 and erased["erasure_id"].startswith("era_")
    answer = api.get("/v1/audit-trail/verify").json()  # incremental, from before the erasure
    assert answer["valid"] is True and answer["erased_entries"] == 4 and answer["checkpoints_checked"] >= 1
    result = full_check(api)
    assert result["valid"] is True and result["first_invalid_checkpoint"] is None
    listed = api.get("/v1/erasures").json()["data"]
    assert [e["erasure_id"] for e in listed] == [erased["erasure_id"]]
    assert api.get(f"/v1/erasures/{erased['erasure_id']}").json()["entries"] == 4


def test_an_erased_chain_verifies_offline_against_checkpoints_signed_before_and_after(api, tmp_path):
    done = subject_erased(api, tmp_path)
    _, after = checkpoint(api, tmp_path)
    code, out = offline(
        "--key", done.key, "--checkpoint", done.before, "--checkpoint", after, export(api, tmp_path)
    )
    assert code == 0, out
    assert "OK: 10 entries" in out and "4 entries had their personal fields erased" in out


def test_erased_entries_show_no_personal_part_and_the_figures_keep_their_values(api, tmp_path):
    done = subject_erased(api, tmp_path)
    entries = all_entries(api)
    assert [recompute_hash(entry) for entry in entries] == [entry["hash"] for entry in entries]
    shown = {e["sequence"]: e for e in entries}
    assert shown[4]["erased"] is True and shown[4]["personal_fields"] is None and shown[4]["salt"] is None
    assert shown[4]["user_id"] is None and shown[4]["subject_id"] is None
    assert shown[7]["type"] == "subgroups_attached" and shown[7]["erased"] is True
    assert shown[10]["type"] == "erasure" and shown[10]["sequences"] == [[4, 7]]
    assert shown[10]["legal_basis"] == "gdpr_art_17_1_a" and "personal" not in shown[10]
    # the NDJSON export shows them as the trail does (on PostgreSQL it is rendered by the database)
    lines = [
        json.loads(line) for line in Path(export(api, tmp_path)).read_text(encoding="utf-8").splitlines()
    ]
    hidden = {"erased": True, "personal_fields": None, "salt": None, "user_id": None, "subject_id": None}
    assert [line["sequence"] for line in lines if line.items() >= hidden.items()] == [4, 5, 6, 7]
    assert lines[0]["erased"] is False and lines[0]["user_id"] == "alice" and lines[0]["salt"]
    # the subgroup statistics count groups, not people: they keep their counts too
    assert figures() == done.figures
    assert not SubgroupAttachment.objects.filter(decision_id="d-attached").exists()


def test_erasing_a_reviewer_rekeys_their_figures_to_a_pseudonym(api, tmp_path):
    log(api, 3, user_id=REVIEWER)
    log(api, 2, user_id="bob")
    before = sorted(UserDailyAggregate.objects.filter(user_id=REVIEWER).values_list("day", "n", "conf_sum"))
    response = erase(api, user_id=REVIEWER, legal_basis="gdpr_art_17_1_b")
    assert response.status_code == 202
    pseudonym = response.json()["pseudonym"]
    assert pseudonym.startswith("erased:") and len(pseudonym) == len("erased:") + 8
    assert (
        sorted(UserDailyAggregate.objects.filter(user_id=pseudonym).values_list("day", "n", "conf_sum"))
        == before
    )
    assert not Decision.objects.filter(user_id=REVIEWER).exists()
    assert Decision.objects.filter(user_id=pseudonym).count() == 3
    assert REVIEWER not in dump()
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    # the same request again erases nothing more and says so
    again = erase(api, user_id=REVIEWER, legal_basis="gdpr_art_17_1_b")
    assert again.status_code == 200 and again.json()["repeated"] is True
    assert again.json()["erasure_id"] == response.json()["erasure_id"]
    assert AuditEntry.objects.filter(type="erasure").count() == 1


def test_a_changed_personal_field_of_an_unerased_entry_fails_online_and_offline(api, tmp_path):
    log(api, 3, user_id="alice", subject_id="s-1")
    key, note = checkpoint(api, tmp_path)
    AuditEntry.objects.filter(sequence=2).update(user_id="mallory")
    result = full_check(api)
    assert result["valid"] is False and result["first_invalid_sequence"] == 2
    code, out = offline("--key", key, "--checkpoint", note, export(api, tmp_path))
    assert code == 1 and "sequence 2" in out and "commitment" in out


def test_an_erased_commitment_cannot_be_found_by_trying_every_low_entropy_value(api):
    log(api, 1, user_id="u", subject_id="s", context="", subgroups={"gender": "f", "age_group": "18-30"})
    entry = all_entries(api)[0]
    assert erase(api, subject_id="s").status_code == 202
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
    assert api.get("/v1/retention-policy").json() == {
        "min_days": 183,
        "max_days": None,
        "legal_hold": False,
        "changed_at": None,
    }
    bad = api.put(
        "/v1/retention-policy", {"min_days": 30, "max_days": None, "legal_hold": False}, format="json"
    )
    assert_problem(bad, 400, "VALIDATION_ERROR")
    assert_problem(erase(api, subject_id="a", user_id="b"), 400, "VALIDATION_ERROR")
    assert_problem(erase(api, subject_id="a", legal_basis="because"), 400, "VALIDATION_ERROR")
    log(api, 2, subject_id="held")
    api.put("/v1/retention-policy", {"min_days": 183, "max_days": None, "legal_hold": True}, format="json")
    assert_problem(erase(api, subject_id="held"), 409, "ERASURE_LEGAL_HOLD")
    refused = Erasure.objects.get(customer_id="acme")
    assert refused.status == "refused" and refused.pending_value is None
    assert not AuditEntry.objects.filter(erased=True).exists()
    # the minimum: scheduled until the entries are old enough, then run by the due job
    api.put("/v1/retention-policy", {"min_days": 200, "max_days": 400, "legal_hold": False}, format="json")
    scheduled = erase(api, subject_id="held", override_minimum=False).json()
    assert scheduled["status"] == "scheduled" and scheduled["entries"] == 2
    assert not AuditEntry.objects.filter(erased=True).exists()
    erasures.erasures_run_due(now=timezone.now() + dt.timedelta(days=201))
    done = api.get(f"/v1/erasures/{scheduled['erasure_id']}").json()
    assert done["status"] == "completed" and done["entries"] == 2
    assert Erasure.objects.get(pk=scheduled["erasure_id"]).pending_value is None
    # the maximum: the daily run erases what is older, one entry per run, basis retention_expired
    log(api, 2, subject_id="old")
    erasures.erasures_run_due(now=timezone.now() + dt.timedelta(days=401))
    run = Erasure.objects.filter(legal_basis="retention_expired").get()
    assert run.entries == 2 and AuditEntry.objects.filter(erased=True).count() == 4
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    # tenancy
    assert other_api.get(f"/v1/erasures/{run.pk}").status_code == 404
    assert other_api.get("/v1/erasures").json()["data"] == []


def test_the_offline_verifier_counts_erased_entries_in_one_process_too(api, tmp_path):
    log(api, 2, subject_id="s-2")
    assert erase(api, subject_id="s-2").status_code == 202
    key, note = checkpoint(api, tmp_path)
    from audit import offline_verify

    out = io.StringIO()
    assert (
        offline_verify.main(
            ["--key", key, "--checkpoint", note, "--jobs", "1", export(api, tmp_path)], out=out
        )
        == 0
    )
    assert "2 entries had their personal fields erased" in out.getvalue()


@pytest.mark.parametrize("target", ["subject_id", "user_id"])
def test_the_service_refuses_an_empty_value_and_erases_nothing(api, target):
    """An empty value would match every entry logged without a subject: refused, nothing erased."""
    log(api, 2)
    customer = AuditEntry.objects.first().customer
    with pytest.raises(ValueError, match="must not be empty"):
        erasures.erasure_request(
            customer=customer, target=target, value="", reason="test", legal_basis="gdpr_art_17_1_a"
        )
    assert not Erasure.objects.exists()
    assert not AuditEntry.objects.filter(erased=True).exists()
