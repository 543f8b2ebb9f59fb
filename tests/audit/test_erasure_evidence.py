"""Erasure evidence that cannot be faked and erasures that do what they say
(docs/reference/erasure.md): the offline verifier accepts an erased entry only when an
`erasure` entry of the same export lists it; a reviewer's erasure always cleans up what names
them; erasures of one person run one after the other and count rows actually changed; an
erasure naming nobody appends nothing; a later erasure completes the scheduled requests it
covers; the digests are keyed by a secret of the installation, never the development key."""

import hashlib
import hmac
import json
import stat
import threading
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connections

from audit.erasure_secret import secret_path
from audit.models import AuditEntry, ChainHead, Decision, Erasure
from calibration.models import UserDailyAggregate
from tests.audit.erasure_helpers import REVIEWER, checkpoint, erase, export, log
from tests.audit.factories import all_entries
from tests.audit.test_checkpoint_tamper import offline
from tests.conftest import client_for, make_key
from webhooks.models import Event


def _forge_erased(path: str, sequence: int) -> None:
    """Rewrite one unerased entry of an export as erased, as someone hiding a person would."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    doc = json.loads(lines[sequence - 1])
    assert doc["erased"] is False
    doc.update(personal_fields=None, salt=None, erased=True, user_id=None, subject_id=None)
    doc.update(context=None, subgroups=None)
    lines[sequence - 1] = json.dumps(doc)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.django_db
def test_the_offline_verifier_refuses_an_entry_forged_as_erased_and_names_the_erasure_of_a_real_one(
    api, tmp_path
):
    log(api, 2, subject_id="s-gone", user_id="ann")
    log(api, 2, subject_id="s-kept", user_id="ben")
    erased = erase(api, subject_id="s-gone").json()
    key, note = checkpoint(api, tmp_path)
    genuine = export(api, tmp_path)
    code, out = offline("--key", key, "--checkpoint", note, genuine)
    assert code == 0, out
    assert f"erasure {erased['erasure_id']} (its entry, sequence {erased['entry_sequence']})" in out
    assert "2 erased entries are listed" in out
    # the same export with entry 3 (s-kept's) rewritten as erased: its hash still holds, but no
    # erasure entry lists sequence 3
    _forge_erased(genuine, 3)
    code, out = offline("--key", key, "--checkpoint", note, genuine)
    assert code == 1, out
    assert "sequence 3" in out and "no `erasure` entry of this export lists its sequence" in out


@pytest.mark.django_db
def test_an_erased_entry_alone_with_its_inclusion_proof_is_not_accepted(api, tmp_path):
    log(api, 2, subject_id="s-one")
    assert erase(api, subject_id="s-one").status_code == 202
    key, note = checkpoint(api, tmp_path)
    entry = all_entries(api)[0]
    size = json.loads(Path(note).read_text())["sequence"]
    proof = api.get("/v1/audit-trail/proofs/inclusion", {"sequence": 1, "tree_size": size}).json()
    (tmp_path / "entry.json").write_text(json.dumps(entry))
    (tmp_path / "proof.json").write_text(json.dumps(proof))
    code, out = offline(
        "--key",
        key,
        "--checkpoint",
        note,
        "--entry",
        str(tmp_path / "entry.json"),
        "--proof",
        str(tmp_path / "proof.json"),
    )
    assert code == 1 and "reads erased" in out, out


@pytest.mark.django_db
def test_a_reviewer_erasure_cleans_up_after_their_entries_were_erased_by_a_subject_erasure(api):
    log(api, 4, user_id=REVIEWER, subject_id="s-both", ai_confidence=0.3)
    assert erase(api, subject_id="s-both").json()["entries"] == 4
    assert UserDailyAggregate.objects.filter(user_id=REVIEWER).exists()
    assert api.post("/v1/trust-score", {"user_id": REVIEWER}, format="json").json()["decisions_analyzed"] == 4
    response = erase(api, user_id=REVIEWER)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "completed" and body["entries"] == 0
    assert not UserDailyAggregate.objects.filter(user_id=REVIEWER).exists()
    assert UserDailyAggregate.objects.filter(user_id=body["pseudonym"]).exists()
    assert not Decision.objects.filter(user_id=REVIEWER).exists()
    figures = api.post("/v1/trust-score", {"user_id": REVIEWER}, format="json").json()
    assert figures.get("decisions_analyzed", 0) == 0, figures
    # it named someone (their rows): its entry and event are there
    assert body["entry_sequence"] is not None
    assert Event.objects.filter(type="erasure.completed", data__erasure_id=body["erasure_id"]).exists()


@pytest.mark.django_db
def test_an_erasure_naming_nobody_appends_no_entry_and_fires_no_event(api):
    log(api, 2, user_id="ann", subject_id="s-real")
    entries = AuditEntry.objects.count()
    events = Event.objects.filter(type="erasure.completed").count()
    for body in ({"subject_id": "nobody-at-all"}, {"user_id": "no-such-reviewer"}):
        response = erase(api, **body)
        assert response.status_code == 202
        assert response.json()["status"] == "completed" and response.json()["entries"] == 0
        assert response.json()["entry_sequence"] is None
    assert AuditEntry.objects.count() == entries
    assert Event.objects.filter(type="erasure.completed").count() == events


@pytest.mark.django_db
def test_a_later_erasure_completes_the_scheduled_request_it_covers_and_drops_its_value(api):
    log(api, 3, subject_id="s-sched")
    scheduled = erase(api, subject_id="s-sched", override_minimum=False).json()
    assert scheduled["status"] == "scheduled"
    assert Erasure.objects.get(pk=scheduled["erasure_id"]).pending_value == "s-sched"
    now = erase(api, subject_id="s-sched", override_minimum=True, legal_basis="gdpr_art_17_1_d").json()
    assert now["status"] == "completed" and now["entries"] == 3
    covered = api.get(f"/v1/erasures/{scheduled['erasure_id']}").json()
    assert covered["status"] == "completed" and covered["covered_by"] == now["erasure_id"]
    assert Erasure.objects.get(pk=scheduled["erasure_id"]).pending_value is None


@pytest.mark.django_db
def test_erasure_digests_are_keyed_by_a_secret_of_the_installation_never_the_development_key(api, settings):
    settings.SECRET_KEY = settings.INSECURE_SECRET_KEY
    log(api, 1, subject_id="s-digest")
    erased = erase(api, subject_id="s-digest").json()
    digest = Erasure.objects.get(pk=erased["erasure_id"]).target_digest
    message = b"acme\x00subject_id\x00s-digest"
    assert digest != hmac.new(settings.INSECURE_SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()
    path = secret_path()
    assert Path(path).parent == Path(django_settings.DATA_DIR)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    secret = path.read_text().strip().encode()
    assert len(secret) == 64
    assert digest == hmac.new(secret, message, hashlib.sha256).hexdigest()


def _concurrently(count: int, work) -> list:
    results: list = [None] * count
    barrier = threading.Barrier(count)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.django_db(transaction=True)
def test_four_concurrent_erasures_of_one_subject_run_one_after_the_other(settings):
    settings.RATE_LIMITS_ENABLED = False
    key = make_key("acme", "enterprise")
    log(client_for(key.value), 300, subject_id="s-race")

    def one(_: int):
        response = erase(client_for(key.value), subject_id="s-race")
        return response.status_code, response.json()

    results = _concurrently(4, one)
    assert sorted(code for code, _ in results) == [200, 200, 200, 202], results
    first = next(body for code, body in results if code == 202)
    assert first["entries"] == 300
    assert all(body["erasure_id"] == first["erasure_id"] for _, body in results)
    assert all(body["repeated"] for code, body in results if code == 200)
    assert ChainHead.objects.get(customer_id="acme").erased == 300
    assert AuditEntry.objects.filter(type="erasure").count() == 1
    assert client_for(key.value).get("/v1/audit-trail/verify").json()["erased_entries"] == 300


@pytest.mark.django_db(transaction=True)
def test_batches_concurrent_with_an_erasure_of_their_reviewer_all_answer(settings):
    """A batch and an erasure of the same reviewer lock in one order (audit/erasure_run.py):
    neither waits for the other forever (PostgreSQL would end one of them as a deadlock)."""
    settings.RATE_LIMITS_ENABLED = False
    key = make_key("acme", "enterprise")
    api = client_for(key.value)
    log(api, 200, user_id=REVIEWER, ai_confidence=0.4)

    def one(i: int):
        client = client_for(key.value)
        if i == 0:
            return erase(client, user_id=REVIEWER).status_code
        from tests.audit.factories import decision_body

        items = [decision_body(user_id=REVIEWER if n % 2 else "other", ai_confidence=0.6) for n in range(200)]
        return client.post("/v1/log/batch", {"decisions": items}, format="json").status_code

    results = _concurrently(6, one)
    assert results[0] == 202 and results[1:] == [200] * 5, results
    assert client_for(key.value).get("/v1/audit-trail/verify").json()["valid"] is True


@pytest.mark.django_db(transaction=True)
def test_after_an_erasure_the_sqlite_files_hold_the_erased_value_nowhere(settings):
    """The write-ahead log is checkpointed with TRUNCATE and freed space zeroed (secure_delete):
    an erased value is not left in the database's files for a disk reader."""
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite's files; PostgreSQL's dead rows: test_erasure_worker.py")
    settings.RATE_LIMITS_ENABLED = False
    key = make_key("acme", "enterprise")
    api = client_for(key.value)
    secret = "subject-4f1c-only-in-these-files"
    log(api, 50, subject_id=secret, context=f"about {secret}")
    database = Path(connection.settings_dict["NAME"])

    def files_holding() -> list[str]:
        return [
            path.name
            for path in database.parent.glob(database.name + "*")
            if path.is_file() and secret.encode() in path.read_bytes()
        ]

    assert files_holding(), "the value was written to the files before the erasure"
    assert erase(api, subject_id=secret).json()["entries"] == 50
    assert files_holding() == []
    wal = database.with_name(database.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
