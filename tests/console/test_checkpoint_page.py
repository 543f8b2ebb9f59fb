"""The console's audit page (chain heads): each customer's latest signed checkpoint and its
age, and a "make a checkpoint now" action (docs/reference/checkpoints.md)."""

import re

import pytest

from audit.models import SignedCheckpoint
from tests.audit.factories import decision_body
from tests.console.test_admin_site import officer  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def test_the_audit_page_shows_the_latest_checkpoint_and_makes_one_on_request(officer, api):  # noqa: F811
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(3)]}, format="json")
    page = officer.get("/admin/audit/chainhead/").content.decode()
    assert "none yet" in page and "Make a checkpoint now" in page
    answer = officer.post(
        "/admin/audit/chainhead/", {"action": "make_checkpoint", "_selected_action": ["acme"]}, follow=True
    )
    messages = [str(m) for m in answer.context["messages"]]
    made = SignedCheckpoint.objects.get(customer_id="acme")
    assert any(f"acme: Signed a checkpoint at 3 entries ({made.pk})" in m for m in messages), messages
    api.post("/v1/log", decision_body(), format="json")
    page = officer.get("/admin/audit/chainhead/").content.decode()
    assert "3 entries (1 newer not yet signed)" in page and re.search(
        r"ago \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)", page
    )
    again = officer.post(
        "/admin/audit/chainhead/", {"action": "make_checkpoint", "_selected_action": ["acme"]}, follow=True
    )
    assert SignedCheckpoint.objects.filter(customer_id="acme").count() == 2
    officer.post(
        "/admin/audit/chainhead/", {"action": "make_checkpoint", "_selected_action": ["acme"]}, follow=True
    )
    assert SignedCheckpoint.objects.filter(customer_id="acme").count() == 2  # not grown: none more
    assert again.status_code == 200
    detail = officer.get(f"/admin/audit/signedcheckpoint/{made.pk}/change/").content.decode()
    assert "trustcal.local/acme" in detail
