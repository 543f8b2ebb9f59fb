"""Two checkpoints and a consistency proof, checked offline with no export and no Django
(docs/reference/checkpoints.md, "Prove nothing was rewritten between two dates"), and
GET /audit-trail/checkpoints?at= picking the checkpoint of a time. The offline check is held
against the RFC 9162 verifier the tree tests wrote from the RFC alone."""

import base64
import datetime as dt
import json
from pathlib import Path

import pytest

from audit import checkpoint_key, merkle, note, tree
from audit.models import SignedCheckpoint
from audit.offline_consistency import verify_consistency
from tests.audit.factories import decision_body
from tests.audit.tamper import rewrite_chain
from tests.audit.test_checkpoint_tamper import offline
from tests.audit.test_merkle_proofs import LEAVES, _h, _stored, rfc_mth, rfc_verify_consistency


# --- pure: the offline check agrees with the RFC reference --------------------------------
@pytest.mark.parametrize("second", range(1, 34))
def test_the_offline_consistency_check_agrees_with_the_rfc_reference(second):
    stored = _stored(second)
    root = rfc_mth(LEAVES[:second])
    for first in range(1, second + 1):
        path = [
            merkle.range_hash(a, b, stored.__getitem__) for a, b in merkle.consistency_ranges(first, second)
        ]
        first_root = rfc_mth(LEAVES[:first])
        assert verify_consistency(first, second, path, first_root, root)
        assert rfc_verify_consistency(first, second, path, first_root, root)
        other = rfc_mth([_h(b"rewritten"), *LEAVES[1:first]])  # the same size, another history
        assert not verify_consistency(first, second, path, other, root)
        assert not rfc_verify_consistency(first, second, path, other, root)
        if path:
            bent = [_h(b"x"), *path[1:]]
            assert verify_consistency(first, second, bent, first_root, root) == rfc_verify_consistency(
                first, second, bent, first_root, root
            )
    assert not verify_consistency(second + 1, second, [], root, root)


# --- the service's checkpoints and proofs, checked offline ---------------------------------
def _log(api, count: int) -> None:
    r = api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(count)]}, format="json")
    assert r.status_code == 200, r.content


def _checkpoints(api, before: int, after: int) -> tuple[dict, dict]:
    """A checkpoint after `before` entries, and one after `after` more."""
    _log(api, before)
    old = api.post("/v1/audit-trail/checkpoints").json()
    _log(api, after)
    return old, api.post("/v1/audit-trail/checkpoints").json()


def _files(api, tmp_path: Path, old: dict, new: dict) -> list[str]:
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    (tmp_path / "key.json").write_bytes(api.get("/v1/audit-trail/checkpoint-key").content)
    proof = api.get(f"/v1/audit-trail/proofs/consistency?first={old['sequence']}&second={new['sequence']}")
    assert proof.status_code == 200, proof.content
    (tmp_path / "proof.json").write_bytes(proof.content)
    return [
        "--key", str(tmp_path / "key.json"),
        "--consistency", str(tmp_path / "old.json"), str(tmp_path / "new.json"),
        "--proof", str(tmp_path / "proof.json"),
    ]  # fmt: skip


@pytest.mark.django_db
def test_a_later_checkpoint_of_an_untouched_trail_extends_the_earlier_one_offline(api, tmp_path):
    old, new = _checkpoints(api, 5, 8)
    args = _files(api, tmp_path, old, new)
    code, out = offline(*args)
    assert code == 0, out
    assert "OK: both signatures check" in out and "first 5 entries are exactly those" in out
    # The same proof read independently: the RFC reference over the entries' own hashes.
    rows = api.get("/v1/audit-trail?limit=100").json()["data"]
    leaves = [bytes.fromhex(r["hash"]) for r in sorted(rows, key=lambda r: r["sequence"])]
    proof = json.loads((tmp_path / "proof.json").read_text())
    path = [base64.b64decode(h) for h in proof["hashes"]]
    assert rfc_verify_consistency(5, 13, path, rfc_mth(leaves[:5]), rfc_mth(leaves))
    assert bytes.fromhex(new["root_hash"]) == rfc_mth(leaves)


@pytest.mark.django_db
def test_a_history_rewritten_and_signed_again_fails_the_offline_consistency_check(api, tmp_path):
    """The operator rewrites entry 2 onwards, rebuilds the tree and (holding the key) signs it:
    each checkpoint alone verifies, but the new one does not extend the one kept from before."""
    _log(api, 6)
    old = api.post("/v1/audit-trail/checkpoints").json()
    _log(api, 4)
    rewrite_chain("acme", from_sequence=2)
    root = tree.root_at("acme", 10)
    text = note.checkpoint_text(
        note.Checkpoint(
            origin=checkpoint_key.origin("acme"),
            size=10,
            root=root,
            extensions=("time 2026-11-26T00:00:00.000Z",),
        )
    )
    forged = {
        "sequence": 10,
        "note": note.sign(text, checkpoint_key.key_name(), checkpoint_key.signing_key()),
    }
    code, out = offline(*_files(api, tmp_path, old, forged))
    assert code == 1, out
    assert "does NOT extend" in out and "first 6 entries were changed" in out


@pytest.mark.django_db
def test_wrong_inputs_are_refused_with_their_reason(api, tmp_path):
    old, new = _checkpoints(api, 3, 3)
    args = _files(api, tmp_path, old, new)
    # The checkpoints given in the wrong order.
    swapped = list(args)
    swapped[3], swapped[4] = swapped[4], swapped[3]
    code, out = offline(*swapped)
    assert code == 1 and "larger than the new one" in out
    # A note edited after signing.
    (tmp_path / "new.json").write_text(json.dumps({**new, "note": new["note"].replace("\n6\n", "\n7\n")}))
    code, out = offline(*args)
    assert code == 1 and "NOT signed by" in out
    # A proof that is not one.
    (tmp_path / "new.json").write_text(json.dumps(new))
    (tmp_path / "proof.json").write_text("[]")
    code, out = offline(*args)
    assert code == 2 and "CANNOT VERIFY" in out and "not a consistency proof" in out


# --- GET /audit-trail/checkpoints?at= -------------------------------------------------------
@pytest.mark.django_db
def test_at_lists_the_checkpoints_made_at_or_before_it_the_last_first(api):
    _log(api, 2)
    first = api.post("/v1/audit-trail/checkpoints").json()
    _log(api, 2)
    second = api.post("/v1/audit-trail/checkpoints").json()
    SignedCheckpoint.objects.filter(pk=first["checkpoint_id"]).update(
        created_at=dt.datetime(2026, 10, 1, 12, tzinfo=dt.UTC)
    )
    SignedCheckpoint.objects.filter(pk=second["checkpoint_id"]).update(
        created_at=dt.datetime(2026, 10, 20, 12, tzinfo=dt.UTC)
    )

    def ids(at: str) -> list[str]:
        r = api.get("/v1/audit-trail/checkpoints", {"at": at})
        assert r.status_code == 200, r.content
        return [c["checkpoint_id"] for c in r.json()["data"]]

    assert ids("2026-10-01T12:00:00Z") == [first["checkpoint_id"]]  # at the instant: included
    assert ids("2026-10-01T11:59:59.999Z") == []
    assert ids("2026-10-19") == [first["checkpoint_id"]]  # a date: the end of that UTC day
    assert ids("2026-10-20") == [second["checkpoint_id"], first["checkpoint_id"]]
    assert len(api.get("/v1/audit-trail/checkpoints").json()["data"]) == 2


@pytest.mark.django_db
@pytest.mark.parametrize("at", ["yesterday", "2026-13-01", "", "2026-10-01T25:00:00Z"])
def test_an_unreadable_at_is_a_validation_error(api, at):
    r = api.get("/v1/audit-trail/checkpoints", {"at": at})
    assert r.status_code == 400 and r.json()["code"] == "VALIDATION_ERROR", r.content
