"""Console findings of an auditor's trial, each with its rule: the daily-aggregates list shows a
reviewer's day once (the sum over every model by default, one model's rows when filtered), the
amplification alert page prints the gaps between two groups' rates in percentage points beside
their percentages, and p-values read as in the reports ("under 0.001", one formatter)."""

import re

import pytest

from compliance.printing import figure
from config.admin import p_text
from tests.audit.erasure_helpers import log
from tests.console.test_admin_site import ANALYSIS, officer, root  # noqa: F401 (fixtures)
from tests.fairness.factories import AlertFactory

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _rows(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr[^>]*>.*?</tr>", body, re.S)


def test_the_daily_aggregates_list_shows_each_reviewers_day_once(root, api):  # noqa: F811
    log(api, 3, user_id="alice")
    listed = root.get("/admin/calibration/userdailyaggregate/").content.decode()
    rows = _rows(listed)
    assert len(rows) == 1, rows  # one reviewer, one day: once, not as "*" and as its model
    assert "every model" in rows[0]
    assert "Every model (summed)" in _text(listed)
    models = re.findall(r'href="\?model=([^"&]+)"', listed)
    assert models, "the model filter lists the models"
    one = root.get(f"/admin/calibration/userdailyaggregate/?model={models[0]}").content.decode()
    assert len(_rows(one)) == 1 and "every model" not in _rows(one)[0]


def test_amplification_gaps_print_in_points_beside_the_percentages(officer):  # noqa: F811
    alert = AlertFactory(severity="critical", amplification_score=0.8, analysis=ANALYSIS)
    text = _text(officer.get(f"/admin/fairness/amplificationalert/{alert.id}/change/").content.decode())
    assert "Model disparity observed 20.0 points" in text and "Human disparity 45.0 points" in text
    # approve: AI 60.0% vs 40.0% (gap 20.0 points), human 75.0% vs 30.0% (gap 45.0 points)
    assert "approve 60.0% 75.0% 40.0% 30.0% 20.0 points 45.0 points" in text
    assert "0.450" not in text  # the observed gaps never as decimals (the tool's own metric is as it sent it)


def test_console_and_reports_print_a_p_value_by_one_rule():
    for value, printed in (
        (3.49e-238, "under 0.001"),
        (0.00099, "under 0.001"),
        (0.001, "0.001"),
        (0.5656, "0.566"),
    ):
        assert p_text(value) == printed == figure("p_value", value)
    assert p_text(None) == "not tested"


def test_read_only_pages_name_the_organisation_without_a_link_compliance_staff_cannot_open(api, officer):  # noqa: F811
    log(api, 1, user_id="alice")
    for changelist in ("/admin/audit/decision/", "/admin/audit/auditentry/", "/admin/audit/chainhead/"):
        listed = officer.get(changelist).content.decode()
        page_url = re.search(r'<th class="field-[^"]+"><a href="([^"]+/change/)"', listed).group(1)
        page = officer.get(page_url).content.decode()
        assert "/admin/keys/customer/" not in page and "acme" in _text(page), changelist
    assert officer.get("/admin/keys/customer/acme/change/").status_code == 403
