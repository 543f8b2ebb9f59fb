"""The Django admin pages of decision and calibration objects render for staff: decisions
(read-only, searchable, filterable), user profiles, thresholds (editable)."""

import pytest
from django.contrib.auth import get_user_model

from calibration.models import Threshold
from tests.audit.factories import decision_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return client


def test_admin_lists_decisions_with_search_and_filters_read_only(api, staff):
    api.post("/v1/log", decision_body(decision_id="adm-1", ai_confidence=0.2), format="json")
    page = staff.get("/admin/audit/decision/", {"q": "adm-1", "calibration_category__exact": "OVERTRUSTING"})
    assert page.status_code == 200
    assert b"adm-1" in page.content
    assert staff.get("/admin/audit/decision/add/").status_code == 403
    assert staff.get("/admin/audit/auditentry/").status_code == 200


def test_admin_shows_user_profiles_and_edits_thresholds(api, staff):
    api.post("/v1/log", decision_body(), format="json")
    assert staff.get("/admin/calibration/userdailyaggregate/").status_code == 200
    r = staff.post(
        "/admin/calibration/threshold/add/",
        {
            "customer": "acme",
            "name": "overrides",
            "figure": "override_rate",
            "comparison": "gt",
            "value": "0.4",
            "window_days": "7",
            "model_id": "",
            "min_decisions": "1",
            "is_active": "on",
        },
    )
    assert r.status_code == 302, r.content[:500]
    assert Threshold.objects.get(name="overrides").value == 0.4
