"""The console's User calibration page judges reviewers as POST /trust-score does
(docs/reference/calibration.md, A miscalibrated confidence): when the confidence check over the
organisation's decisions of the window rejects the AI's confidence, every reviewer's figures use
the recalibrated p', and the page says so."""

from html import unescape

import pytest

from calibration.selectors import DayRange
from calibration.serializers import FIGURE_KEYS
from calibration.windows import user_calibration_window
from console.permissions import COMPLIANCE_STAFF
from keys.models import Customer
from tests.calibration.test_calibrate_recalibrated import _decisions
from tests.oversight.helpers import staff_client

pytestmark = pytest.mark.django_db
PAGE = "/admin/console/user-calibration/?customer=acme&days=90"


def _served(api, user_id: str) -> dict:
    body = api.post("/v1/trust-score", {"user_id": user_id}, format="json").json()
    return {key: body[key] for key in FIGURE_KEYS}


def test_reviewers_are_judged_with_the_recalibrated_confidence_when_the_check_rejects(api):
    assert api.post("/v1/log/batch", {"decisions": _decisions(400)}, format="json").json()["accepted"] == 400
    assert (
        api.post("/v1/trust-score", {}, format="json").json()["confidence_check"]["verdict"]
        == "miscalibrated"
    )
    users, recalibrated = user_calibration_window(
        Customer.objects.get(id="acme"), days=DayRange.last_days(90), model_id=None
    )
    assert recalibrated is True
    assert {u["user_id"] for u in users} == {"r1", "r2"}
    for user in users:
        assert user["confidence_recalibrated"] is True
        assert {key: user[key] for key in FIGURE_KEYS} == _served(api, user["user_id"])
    page = unescape(staff_client("olivia", COMPLIANCE_STAFF).get(PAGE).content.decode())
    assert 'id="recalibrated"' in page and "judged with the recalibrated confidence" in page


def test_the_page_reads_the_aggregates_when_the_check_does_not_reject(api):
    bodies = [body | {"ai_confidence": None, "outcome": None} for body in _decisions(40)]
    assert api.post("/v1/log/batch", {"decisions": bodies}, format="json").json()["accepted"] == 40
    users, recalibrated = user_calibration_window(
        Customer.objects.get(id="acme"), days=DayRange.last_days(90), model_id=None
    )
    assert recalibrated is False
    for user in users:
        assert {key: user[key] for key in FIGURE_KEYS} == _served(api, user["user_id"])
    page = unescape(staff_client("olivia", COMPLIANCE_STAFF).get(PAGE).content.decode())
    assert 'id="recalibrated"' not in page and "r1" in page
