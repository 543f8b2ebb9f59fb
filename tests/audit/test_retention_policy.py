"""Retention policy changes are evidence (docs/reference/erasure.md, "Retention"): PUT needs
every field, each change (the legal hold included) appends a `retention_policy_changed` entry
with the previous and new values and who changed it, through the API and the console, and the
chain with those entries verifies online and offline."""

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from audit.models import AuditEntry
from audit.models_erasure import RetentionPolicy
from tests.audit.erasure_helpers import checkpoint, erase, export, full_check, log
from tests.audit.test_checkpoint_tamper import offline
from tests.conftest import assert_problem, client_for, make_key
from tests.console.test_admin_site import login

pytestmark = pytest.mark.django_db

POLICY = "/v1/retention-policy"
HOLD = {"min_days": 183, "max_days": None, "legal_hold": True}
LIFTED = {"min_days": 183, "max_days": None, "legal_hold": False}


def _changes(api) -> list[dict]:
    trail = api.get("/v1/audit-trail", {"limit": 100}).json()["data"]
    return sorted((e for e in trail if e["type"] == "retention_policy_changed"), key=lambda e: e["sequence"])


@pytest.mark.parametrize(
    "body",
    [
        None,
        {},
        {"legal_hold": False},
        {"min_days": 183, "max_days": None},
        {"min_days": 183, "legal_hold": False},
        {"min_days": None, "max_days": None, "legal_hold": False},
        {"min_days": 183, "max_days": None, "legal_hold": None},
        [],
    ],
)
def test_a_put_without_every_field_answers_400_and_keeps_the_legal_hold(api, body):
    assert api.put(POLICY, HOLD, format="json").status_code == 200
    before = AuditEntry.objects.count()
    answer = (
        api.put(POLICY, body, format="json")
        if body is not None
        else api.put(POLICY, "null", content_type="application/json")
    )
    assert_problem(answer, 400, "VALIDATION_ERROR")
    assert api.get(POLICY).json()["legal_hold"] is True
    assert AuditEntry.objects.count() == before


def test_a_missing_field_is_named(api):
    body = assert_problem(api.put(POLICY, {"legal_hold": False}, format="json"), 400, "VALIDATION_ERROR")
    assert {e["field"] for e in body["errors"]} == {"min_days", "max_days"}


def test_each_change_appends_an_entry_with_previous_and_new_values_and_the_key(api, acme_key):
    assert api.get(POLICY).json()["changed_at"] is None
    held = api.put(POLICY, HOLD, format="json").json()
    assert held["legal_hold"] is True and held["changed_at"].endswith("Z")
    assert api.put(POLICY, HOLD, format="json").json()["changed_at"] == held["changed_at"]  # no change
    api.put(POLICY, LIFTED, format="json")
    changes = _changes(api)
    assert [(c["previous"], c["policy"]) for c in changes] == [(LIFTED, HOLD), (HOLD, LIFTED)]
    assert {c["key_id"] for c in changes} == {acme_key.key.id}
    assert {c["staff_user"] for c in changes} == {None}
    assert api.get(POLICY).json()["changed_at"] == changes[-1]["logged_at"]


def test_a_hold_lifted_then_an_erasure_then_the_hold_set_again_is_all_in_the_chain(api, tmp_path):
    """The finding: a key lifted the hold, erased with override and set it again; nothing showed."""
    log(api, 2, subject_id="held")
    key, before = checkpoint(api, tmp_path)
    api.put(POLICY, HOLD, format="json")
    api.put(POLICY, LIFTED, format="json")
    assert erase(api, subject_id="held").json()["status"] == "completed"
    api.put(POLICY, HOLD, format="json")
    trail = api.get("/v1/audit-trail", {"limit": 100}).json()["data"]
    kinds = [e["type"] for e in sorted(trail, key=lambda e: e["sequence"])]
    assert kinds[-4:] == ["retention_policy_changed", "retention_policy_changed", "erasure",
                          "retention_policy_changed"]  # fmt: skip
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
    assert full_check(api)["valid"] is True
    _, after = checkpoint(api, tmp_path)
    path = export(api, tmp_path)
    code, out = offline("--key", key, "--checkpoint", before, "--checkpoint", after, path)
    assert code == 0, out


def test_an_edited_policy_change_fails_offline(api, tmp_path):
    api.put(POLICY, HOLD, format="json")
    api.put(POLICY, LIFTED, format="json")
    key, note = checkpoint(api, tmp_path)
    path = export(api, tmp_path)
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    lifted = next(e for e in lines if e["type"] == "retention_policy_changed" and e["policy"] == LIFTED)
    lifted["policy"]["legal_hold"] = True  # whoever hands over the export hides the lifting
    Path(path).write_text("".join(json.dumps(e) + "\n" for e in lines))
    code, out = offline("--key", key, "--checkpoint", note, path)
    assert code != 0 and "FAILED" in out, out


def test_the_console_changes_the_policy_with_the_staff_user_in_the_entry(api):
    root = login(User.objects.create_superuser("root", "root@example.com", "pw"))
    page = root.post(
        "/admin/audit/retentionpolicy/add/",
        {"customer": "acme", "min_days": 183, "max_days": "", "legal_hold": "on"},
    )
    assert page.status_code == 302, page.content.decode()[:3000]
    assert RetentionPolicy.objects.get(customer_id="acme").legal_hold is True
    page = root.post(
        "/admin/audit/retentionpolicy/acme/change/", {"min_days": 200, "max_days": 400}
    )  # legal hold unticked: lifted
    assert page.status_code == 302
    changes = _changes(api)
    assert [c["policy"] for c in changes] == [HOLD, {"min_days": 200, "max_days": 400, "legal_hold": False}]
    assert {c["staff_user"] for c in changes} == {"staff:root"} and {c["key_id"] for c in changes} == {None}
    # the API's rules hold in the form: a minimum below 183 days is a form error, nothing changes
    refused = root.post("/admin/audit/retentionpolicy/acme/change/", {"min_days": 30, "max_days": ""})
    assert refused.status_code == 200 and "errornote" in refused.content.decode()
    assert len(_changes(api)) == 2
    listed = root.get("/admin/audit/retentionpolicy/").content.decode()
    assert "acme" in listed and "UTC" in listed


def test_a_key_without_manage_cannot_change_the_policy(api):
    reader = client_for(make_key("acme", "pilot", scopes=("ingest", "read")).value)
    assert_problem(reader.put(POLICY, LIFTED, format="json"), 403, "INSUFFICIENT_SCOPE")
    assert reader.get(POLICY).status_code == 200
