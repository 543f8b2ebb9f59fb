"""The Oversight group's drift pages (docs/reference/drift.md, When an alarm fires): monitors with
their parameters, baseline fit, chart and last points; alarms open first; the Acknowledge form for
staff with drift.acknowledge_alarm, recorded as staff:<username> through the API's service; a
reviewer's monitors and alarms only with oversight.view_reviewer_figures."""

import re
from html import unescape

import pytest
from django.contrib.auth.models import Group, Permission, User

from console.permissions import COMPLIANCE_STAFF
from tests.oversight.helpers import staff_client

pytestmark = pytest.mark.django_db(transaction=True)
PER_PERSON_GROUP = "oversight per-person figures"


def _text(html: bytes) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html.decode())))


def item(decision_id: str, *, c: float, followed: bool, user: str = "rev-1") -> dict:
    return {
        "decision_id": decision_id, "user_id": user, "model_id": "loan", "ai_recommendation": "approve",
        "ai_confidence": c, "user_decision": "approve" if followed else "deny",
    }  # fmt: skip


@pytest.fixture
def alarms(api):
    """The worked example twice: a reviewer monitor and an organisation monitor, each alarmed."""
    reviewer = api.post(
        "/v1/drift-monitors",
        {"chart": "over_reliance", "scope": "user", "user_id": "rev-1", "model_id": "loan", "h": 4},
        format="json",
    ).json()["monitor_id"]
    organisation = api.post(
        "/v1/drift-monitors", {"chart": "ai_calibration_up", "scope": "organization", "h": 1.0}, format="json"
    ).json()["monitor_id"]
    baseline = [item(f"b3-{i}", c=0.3, followed=i < 30) for i in range(100)]
    baseline += [item(f"b9-{i}", c=0.9, followed=i < 90) for i in range(100)]
    assert api.post("/v1/log/batch", {"decisions": baseline}, format="json").status_code == 200
    later = [item(f"d-{i}", c=0.3, followed=True) for i in range(12)]
    later += [{**item(f"o-{i}", c=0.5, followed=True, user="rev-2"), "outcome": "deny"} for i in range(4)]
    assert api.post("/v1/log/batch", {"decisions": later}, format="json").status_code == 200
    listed = {a["monitor_id"]: a["alarm_id"] for a in api.get("/v1/drift-alarms").json()["data"]}
    return {"reviewer": reviewer, "organisation": organisation, **{f"alarm_{k}": listed[v] for k, v in
            (("reviewer", reviewer), ("organisation", organisation))}}  # fmt: skip


def test_an_officer_sees_the_organisations_monitors_and_acknowledges_its_alarm(api, alarms):
    officer = staff_client("officer", COMPLIANCE_STAFF)
    listing = _text(officer.get("/admin/drift/driftalarm/").content)
    assert alarms["alarm_organisation"] in listing and alarms["alarm_reviewer"] not in listing
    assert "1 alarm(s) of reviewer monitors are counted but not shown" in listing
    assert officer.get(f"/admin/drift/driftmonitor/{alarms['reviewer']}/change/").status_code == 404
    assert officer.get(f"/admin/drift/driftalarm/{alarms['alarm_reviewer']}/change/").status_code == 404
    page = officer.get(f"/admin/drift/driftalarm/{alarms['alarm_organisation']}/change/")
    assert page.status_code == 200 and b'id="acknowledge-form"' in page.content
    bad = officer.post(
        f"/admin/drift/driftalarm/{alarms['alarm_organisation']}/change/", {"disposition": "other"}
    )
    assert "is required and not blank with disposition other" in _text(bad.content)
    done = officer.post(
        f"/admin/drift/driftalarm/{alarms['alarm_organisation']}/change/",
        {"disposition": "model_retrained", "note": "v2.4 retrained"},
    )
    assert done.status_code == 302
    alarm = api.get(f"/v1/drift-alarms/{alarms['alarm_organisation']}").json()
    assert alarm["status"] == "acknowledged" and alarm["acknowledged_by"] == "staff:officer"
    assert alarm["disposition"] == "model_retrained" and alarm["note"] == "v2.4 retrained"
    entries = api.get("/v1/audit-trail", {"limit": 5}).json()["data"]
    assert (
        entries[0]["type"] == "drift_alarm.acknowledged" and entries[0]["acknowledged_by"] == "staff:officer"
    )
    again = officer.get(f"/admin/drift/driftalarm/{alarms['alarm_organisation']}/change/")
    assert b'id="acknowledge-form"' not in again.content and "model_retrained by staff:officer" in _text(
        again.content
    )


def test_per_person_staff_see_the_reviewers_monitor_with_its_fit_chart_and_points(api, alarms):
    client = staff_client("lead", COMPLIANCE_STAFF, PER_PERSON_GROUP)
    assert alarms["alarm_reviewer"] in _text(client.get("/admin/drift/driftalarm/").content)
    page = client.get(f"/admin/drift/driftmonitor/{alarms['reviewer']}/change/")
    assert page.status_code == 200
    text = _text(page.content)
    # the worked example's fit: pi(0.3) = 0.3 and pi(0.9) = 0.9
    assert "0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9" in text and " 0.300 " in text and " 0.900 " in text
    assert b'id="monitor-chart" src="data:image/svg+xml;base64,' in page.content
    assert "The last 12 points" in text and "4.307829 signal" in text
    run = _text(client.get(f"/admin/drift/driftalarm/{alarms['alarm_reviewer']}/change/").content)
    assert "points 1 to 10 (10 points" in run and "2.80 expected extra wrong decisions" in run


def test_staff_without_the_permission_get_no_acknowledge_form(api, alarms):
    viewer = staff_client("viewer")  # signed in, then given the view permissions only

    user = User.objects.get(username="viewer")
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_driftalarm", "view_driftmonitor"])
    )
    url = f"/admin/drift/driftalarm/{alarms['alarm_organisation']}/change/"
    page = viewer.get(url)
    assert page.status_code == 200 and b'id="acknowledge-form"' not in page.content
    assert b'id="acknowledge-withheld"' in page.content
    viewer.post(url, {"disposition": "false_alarm"})
    assert api.get(f"/v1/drift-alarms/{alarms['alarm_organisation']}").json()["status"] == "open"
    assert Group.objects.get(name=COMPLIANCE_STAFF).permissions.filter(codename="acknowledge_alarm").exists()
