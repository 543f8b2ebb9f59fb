"""The staff console: the grouped index, the overview, alert triage as a compliance-staff user, the
alert page, the audit chain check, and what that group may not open."""

import re

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Group, User
from django.test import Client

from config.models import StaffOrganisation
from console.permissions import COMPLIANCE_STAFF, permission_matches
from keys.models import Customer
from tests.conftest import client_for, make_key
from tests.fairness.factories import AlertFactory

pytestmark = pytest.mark.django_db

ANALYSIS = {
    "status": "completed", "amplificationScore": 0.8, "riskLevel": "critical", "direction": "amplifying",
    "modelDisparityObserved": 0.2, "humanDisparity": 0.45, "modelDisparityReported": 0.2, "decisionsAnalyzed": 400,
    "groups": {
        "privileged": {"name": "male", "decisions": 200, "aiRates": {"approve": 0.6, "deny": 0.4},
                       "humanRates": {"approve": 0.75, "deny": 0.25}},
        "unprivileged": {"name": "female", "decisions": 200, "aiRates": {"approve": 0.4, "deny": 0.6},
                         "humanRates": {"approve": 0.3, "deny": 0.7}},
    },
    "analyzedAt": "2026-11-23T12:00:00.000Z",
}  # fmt: skip


def login(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def root() -> Client:
    return login(User.objects.create_superuser("root", "root@example.com", "pw"))


@pytest.fixture
def officer() -> Client:
    user = User.objects.create_user("olivia", "olivia@example.com", "pw", is_staff=True)
    user.groups.add(Group.objects.get(name=COMPLIANCE_STAFF))
    # Assigned the organisation the tests' keys act for (docs/reference/access.md, Staff and
    # their organisations).
    StaffOrganisation.objects.create(user=user, customer=Customer.objects.get_or_create(id="acme")[0])
    return login(user)


def group_names(html: str) -> list[str]:
    return re.findall(r'<a href="/admin/group/[a-z]+/" class="section">([^<]+)</a>', html)


def test_index_is_grouped_by_task_for_a_superuser(root):
    page = root.get("/admin/")
    assert page.status_code == 200
    html = page.content.decode()
    names = group_names(html)
    assert names == ["Alerts", "Decisions and calibration", "Oversight", "Reports", "Integrations", "Access"]
    assert "Trustcal staff console" in html
    for panel in ("panel-alerts", "panel-trend", "panel-webhooks", "panel-workers"):
        assert panel in html


def test_a_group_page_lists_its_models(root):
    page = root.get("/admin/group/alerts/")
    assert page.status_code == 200
    assert "Amplification alerts" in page.content.decode()
    assert root.get("/admin/group/nonsense/").status_code == 404


def test_compliance_staff_group_is_created_with_triage_and_read_rights_and_no_keys_or_webhooks():
    group = Group.objects.get(name=COMPLIANCE_STAFF)
    perms = {
        f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.select_related("content_type")
    }
    assert {"fairness.change_amplificationalert", "audit.view_auditentry", "audit.view_decision"} <= perms
    assert not any(p.startswith(("keys.", "webhooks.")) for p in perms)
    assert "fairness.delete_amplificationalert" not in perms


def test_report_permissions_of_models_added_later_match_by_name():
    assert permission_matches("compliance", "view_exportjob")
    assert permission_matches("compliance", "download_exportjob")
    assert not permission_matches("compliance", "delete_exportjob")
    assert not permission_matches("keys", "view_apikey")


def test_compliance_staff_cannot_open_key_or_webhook_pages(officer):
    for url in ("/admin/keys/apikey/", "/admin/keys/apikey/new/", "/admin/keys/adminauditlog/",
                "/admin/webhooks/webhook/", "/admin/admin/logentry/"):  # fmt: skip
        assert officer.get(url).status_code in (302, 403), url
    html = officer.get("/admin/").content.decode()
    assert group_names(html) == ["Alerts", "Decisions and calibration", "Oversight", "Reports", "Access"]
    assert "panel-webhooks" not in html
    # of Access, erasures only (docs/reference/erasure.md)
    access = officer.get("/admin/group/access/").content.decode()
    assert re.findall(r'<tr class="model-([a-z]+)">', access) == ["erasure", "retentionpolicy"]


def test_officer_resolves_a_critical_alert_with_notes_and_the_api_names_them(officer):
    alert = AlertFactory(severity="critical", amplification_score=0.8, analysis=ANALYSIS)
    AlertFactory(severity="low")
    listed = officer.get("/admin/fairness/amplificationalert/?status__exact=open&severity__exact=critical")
    assert listed.status_code == 200
    html = listed.content.decode()
    assert f"/{quote(alert.id)}/change/" in html and 'class="tc-badge tc-critical"' in html
    assert "gender · credit-v3" in html
    data = {"action": "resolve_alerts", "_selected_action": [alert.pk]}
    form = officer.post("/admin/fairness/amplificationalert/", data)
    assert b"resolution_notes" in form.content
    missing = officer.post(
        "/admin/fairness/amplificationalert/", {**data, "apply": "1", "resolution_notes": ""}
    )
    assert missing.status_code == 200 and b"This field is required" in missing.content
    done = officer.post(
        "/admin/fairness/amplificationalert/",
        {**data, "apply": "1", "resolution_notes": "retrained; gap closed"},
    )
    assert done.status_code == 302
    body = client_for(make_key("acme").value).get(f"/v1/bias/amplification/{alert.id}").json()
    assert body["status"] == "resolved" and body["resolvedBy"] == "staff:olivia"
    assert body["statusHistory"][-1] == {
        "from": "open", "to": "resolved", "by": "staff:olivia", "notes": "retrained; gap closed",
        "at": body["statusHistory"][-1]["at"],
    }  # fmt: skip
    entry = LogEntry.objects.get(object_id=alert.id)
    assert entry.user.username == "olivia" and "resolved" in entry.change_message


def test_alert_page_shows_figures_rates_side_by_side_signal_and_history(officer):
    alert = AlertFactory(severity="critical", amplification_score=0.8, analysis=ANALYSIS)
    page = officer.get(f"/admin/fairness/amplificationalert/{alert.id}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Privileged: male (200 decisions)" in html and "Unprivileged: female (200 decisions)" in html
    assert "75.0%" in html and "30.0%" in html  # human approve rates of both groups
    assert f"/admin/fairness/fairnesssignal/{alert.signal_id}/change/" in html
    assert "Status history" in html and 'name="_save"' not in html
    # triage from the alert's own page: acknowledge
    acknowledged = officer.post(
        f"/admin/fairness/amplificationalert/{alert.id}/change/",
        {"CHANGE_FORM-action": "acknowledge_alerts", "_selected_action": [alert.pk]},
    )
    assert acknowledged.status_code == 302
    alert.refresh_from_db()
    assert alert.status == "acknowledged"


def test_overview_counts_open_alerts_by_severity(root):
    AlertFactory(severity="critical")
    AlertFactory(severity="critical", status="resolved")
    html = root.get("/admin/").content.decode()
    assert re.search(
        r"tc-critical\">critical</span></td>\s*<td class=\"tc-num\"><a href=\"[^\"]+\">1</a>", html
    )


def test_verify_chain_action_reports_an_intact_chain(officer, api):
    for i in range(3):
        api.post("/v1/log", {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "approve",
                             "ai_confidence": 0.9, "decision_id": f"d{i}"}, format="json")  # fmt: skip
    from audit.models import AuditEntry

    ids = list(AuditEntry.objects.values_list("pk", flat=True))
    answer = officer.post(
        "/admin/audit/auditentry/", {"action": "verify_chain", "_selected_action": ids}, follow=True
    )
    messages = [str(m) for m in answer.context["messages"]]
    assert any("Audit chain of acme is intact: 3 entries" in m for m in messages), messages


def test_superuser_creates_a_key_shown_once_and_logged_with_the_staff_user(root):
    page = root.post(
        "/admin/keys/apikey/new/",
        {"customer_id": "initech", "tier": "growth", "description": "desk", "scopes": ["ingest", "read"]},
    )
    assert page.status_code == 200
    value = re.search(r"tcal_[A-Za-z0-9]{40}", page.content.decode()).group(0)
    assert client_for(value).get("/v1/trust-score/x").status_code != 401
    assert "tcal_" not in str(dict(root.session.items()))
    assert 'scopes: <span class="tc-scopes">ingest read</span>' in page.content.decode()
    log = client_for(make_key("admin", is_admin=True).value).get("/v1/admin/audit-log").json()["data"]
    assert any(e["action"] == "api_key.created" and e["admin_user"] == "staff:root" for e in log)


def test_console_keys_show_and_set_scopes_and_rotation_keeps_them(root):
    from keys.models import ApiKey

    form = root.get("/admin/keys/apikey/new/").content.decode()
    for scope in ("ingest", "read", "manage"):  # offered, all checked by default
        assert re.search(rf'<input type="checkbox" name="scopes" value="{scope}"[^>]*checked', form), scope
    refused = root.post("/admin/keys/apikey/new/", {"customer_id": "initech", "tier": "growth"})
    assert b"tcal_" not in refused.content and not ApiKey.objects.filter(customer_id="initech").exists()
    root.post("/admin/keys/apikey/new/", {"customer_id": "initech", "tier": "growth", "scopes": ["read"]})
    key = ApiKey.objects.get(customer_id="initech")
    assert key.scope_list == ["read"]
    listed = root.get("/admin/keys/apikey/").content.decode()
    assert re.search(rf'{key.pk}.*?<td class="field-scopes">read</td>', listed, re.S)
    assert "read" in root.get(f"/admin/keys/apikey/{key.pk}/change/").content.decode()
    rotated = root.post("/admin/keys/apikey/", {"action": "rotate_keys", "_selected_action": [key.pk]})
    value = re.search(r"tcal_[A-Za-z0-9]{40}", rotated.content.decode()).group(0)
    assert 'scopes: <span class="tc-scopes">read</span>' in rotated.content.decode()
    assert ApiKey.objects.get(pk=key.pk).replaced_by.scope_list == ["read"]
    assert client_for(value).post("/v1/log", {}, format="json").json()["code"] == "INSUFFICIENT_SCOPE"


def test_revoke_asks_for_a_reason_and_records_it(root):
    from keys.models import AdminAuditLog, ApiKey

    key = make_key("initech").key
    data = {"action": "revoke_keys", "_selected_action": [key.pk]}
    assert b'name="reason"' in root.post("/admin/keys/apikey/", data).content
    assert (
        root.post("/admin/keys/apikey/", {**data, "apply": "1", "reason": "laptop lost"}).status_code == 302
    )
    assert ApiKey.objects.get(pk=key.pk).status == "revoked"
    assert AdminAuditLog.objects.get(key_id=key.pk, action="api_key.revoked").reason == "laptop lost"


def test_overview_lists_the_latest_exports(root, api):
    requested = api.post("/v1/export", {"template": "eu_ai_act", "format": "json"}, format="json")
    assert requested.status_code == 202
    html = root.get("/admin/").content.decode()
    assert "panel-exports" in html and "eu_ai_act (json)" in html
