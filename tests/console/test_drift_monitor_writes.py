"""Creating, changing and deleting drift monitors in the staff console (docs/reference/drift.md,
In the staff console): the same validation and services as POST, PATCH and DELETE /drift-monitors,
so the audit trail gets the same drift_monitor.configured entries; a monitor of one reviewer only
with oversight.view_reviewer_figures; staff without the drift permissions cannot write."""

import pytest

from console.permissions import COMPLIANCE_STAFF
from drift.models import DriftMonitor
from tests.oversight.helpers import staff_client

pytestmark = pytest.mark.django_db
PER_PERSON_GROUP = "oversight per-person figures"
ADD = "/admin/drift/driftmonitor/add/"
BODY = {
    "chart": "over_reliance",
    "scope": "organization",
    "model_id": "loan",
    "h": 4,
    "name": "Loan reliance",
}


def _form(**fields) -> dict:
    return {"customer": "acme", "enabled": "on", **{k: str(v) for k, v in {**BODY, **fields}.items()}}


def _configured(api) -> list[dict]:
    entries = api.get("/v1/audit-trail", {"limit": 20}).json()["data"]
    return [e for e in entries if e["type"] == "drift_monitor.configured"]


def _comparable(entry: dict) -> dict:
    # What differs between two monitors made alike: their ids, times, places in the chain and seeds.
    ignored = {"monitor_id", "seed", "sequence", "hash", "previous_hash", "logged_at", "timestamp", "id",
               "entry_id", "canonical", "decision_id", "personal", "salt"}  # fmt: skip
    return {k: v for k, v in entry.items() if k not in ignored}


def test_a_monitor_made_in_the_console_is_the_apis_with_the_same_entries(api):
    officer = staff_client("officer", COMPLIANCE_STAFF)
    made = officer.post(ADD, _form())
    monitor = DriftMonitor.objects.get(name="Loan reliance")
    assert made.status_code == 302 and made["Location"] == f"/admin/drift/driftmonitor/{monitor.pk}/change/"
    assert api.post("/v1/drift-monitors", {**BODY, "name": "Loan reliance"}, format="json").status_code == 201
    console_entry, api_entry = sorted(_configured(api), key=lambda e: e["sequence"])
    assert console_entry["monitor_id"] == monitor.pk
    assert _comparable(console_entry) == _comparable(api_entry)
    assert api.get(f"/v1/drift-monitors/{monitor.pk}").json()["h"] == 4

    # A change: name and h, through PATCH's service, its entry naming what changed.
    changed = officer.post(
        f"/admin/drift/driftmonitor/{monitor.pk}/change/", {"name": "Loan v2", "h": "5", "enabled": "on"}
    )
    assert changed.status_code == 302
    latest = _configured(api)[0]
    assert latest["action"] == "updated" and latest["changes"] == ["h", "name"] and latest["h"] == 5
    officer.post(
        f"/admin/drift/driftmonitor/{monitor.pk}/change/", {"name": "Loan v2", "h": "5", "enabled": ""}
    )
    assert _configured(api)[0]["changes"] == ["enabled"]  # unticked: paused
    assert api.get(f"/v1/drift-monitors/{monitor.pk}").json()["enabled"] is False

    # Delete: the monitor stops (its alarms would stay) and the trail records it.
    assert officer.get(f"/admin/drift/driftmonitor/{monitor.pk}/delete/").status_code == 200
    assert officer.post(f"/admin/drift/driftmonitor/{monitor.pk}/delete/").status_code == 302
    assert _configured(api)[0]["action"] == "deleted"
    assert api.get(f"/v1/drift-monitors/{monitor.pk}").status_code == 404


def test_a_refused_monitor_is_a_form_error_and_stores_nothing(api):
    officer = staff_client("officer", COMPLIANCE_STAFF)
    before = len(_configured(api))
    for bad, reason in (
        (_form(h=5000), "at most 1,000"),
        (_form(scope="user", user_id="rev-1"), "needs the oversight per-person figures permission"),
        (_form(model_id="", model_version="2.3"), "is allowed with model_id only"),
    ):
        page = officer.post(ADD, bad)
        assert page.status_code == 200 and reason in page.content.decode(), reason
    assert DriftMonitor.objects.count() == 0 and len(_configured(api)) == before


def test_a_reviewers_monitor_needs_the_per_person_permission(api):
    officer = staff_client("officer", COMPLIANCE_STAFF)
    refused = officer.post(ADD, _form(scope="user", user_id="rev-1"))
    assert (
        refused.status_code == 200 and b"needs the oversight per-person figures permission" in refused.content
    )
    assert not DriftMonitor.objects.exists()
    lead = staff_client("lead", COMPLIANCE_STAFF, PER_PERSON_GROUP)
    assert lead.post(ADD, _form(scope="user", user_id="rev-1")).status_code == 302
    monitor = DriftMonitor.objects.get(user_id="rev-1")
    # Staff without it never see the monitor to change or delete it.
    assert officer.get(f"/admin/drift/driftmonitor/{monitor.pk}/change/").status_code == 404
    assert officer.post(f"/admin/drift/driftmonitor/{monitor.pk}/delete/").status_code == 404
    assert DriftMonitor.objects.get(pk=monitor.pk).deleted_at is None


def test_staff_without_the_drift_permissions_cannot_write(api):
    assert api.post("/v1/drift-monitors", BODY, format="json").status_code == 201
    monitor = DriftMonitor.objects.get()
    viewer = staff_client("viewer")
    from django.contrib.auth.models import Permission, User

    User.objects.get(username="viewer").user_permissions.add(
        Permission.objects.get(codename="view_driftmonitor")
    )
    assert viewer.get(ADD).status_code == 403
    page = viewer.get(f"/admin/drift/driftmonitor/{monitor.pk}/change/")
    assert (
        page.status_code == 200
        and b'id="monitor-change"' not in page.content
        and b"monitor-delete" not in page.content
    )
    assert viewer.post(f"/admin/drift/driftmonitor/{monitor.pk}/change/", {"name": "x"}).status_code == 403
    assert viewer.post(f"/admin/drift/driftmonitor/{monitor.pk}/delete/").status_code == 403
    assert DriftMonitor.objects.get().name == monitor.name and DriftMonitor.objects.get().deleted_at is None
