"""The console prints figures, never program data: a bias alert's findings as groups, sizes, rates,
gap or ratio, p and q ("under 0.001", as reports print them, never 3.49e-238), no JSON list; times in UTC with their zone,
never a raw ISO string; counts with separators; trust scores on the API's 0 to 1 scale; one
decision count per organisation with its vigilance probes named apart; a report's period on its
export job; an empty status history said in words; review effort over the days of a report."""

import datetime as dt
import re
from html import unescape

import pytest
from django.contrib.auth.models import User

from bias.models import BiasAlert
from calibration.models import RiskUserState
from compliance import services as compliance_services
from compliance.models import ExportJob
from console.permissions import COMPLIANCE_STAFF
from keys.models import Customer
from tests.console.test_admin_site import ANALYSIS, login
from tests.fairness.factories import AlertFactory
from tests.oversight.helpers import decision, log_all, probe, staff_client

pytestmark = pytest.mark.django_db

FINDING = {
    "bias_type": "disparate_impact", "attribute": "gender", "group": "female", "reference_group": "male",
    "group_rate": 0.09854, "reference_rate": 0.896942, "value": 0.109862,
    "sample_sizes": {"group": 1822, "reference_group": 883}, "testable": True, "test": "z_test",
    "p_value": 3.498402831768852e-238, "q_value": 1.3993611327075407e-237, "severity": "critical",
    "regulation": "EU AI Act Art. 10",
}  # fmt: skip
SMALL = {**FINDING, "bias_type": "accuracy_disparity", "value": 0.108753, "group_rate": 0.384615,
         "reference_rate": 0.275862, "sample_sizes": {"group": 26, "reference_group": 29},
         "test": "fisher_exact", "p_value": 0.5656239945368842, "q_value": 0.5656239945368842, "severity": "low"}  # fmt: skip
# Stored before the adjustment existed (docs/reference/bias.md, Alerts stored before): p, no q.
OLD = {**FINDING, "bias_type": "outcome_disparity", "value": 0.798402, "p_value": 0.0123, "q_value": None}
ISO_STRING = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


@pytest.fixture
def root():
    return login(User.objects.create_superuser("root", "root@example.com", "pw"))


@pytest.fixture
def bias_alert() -> BiasAlert:
    customer = Customer.objects.get_or_create(id="acme")[0]
    return BiasAlert.objects.create(
        customer=customer, decision_id="d-1", model_id="credit-v3", severity="critical",
        bias_types=["accuracy_disparity", "disparate_impact"], attributes=["gender"], findings=[FINDING, SMALL, OLD],
        created_at=dt.datetime(2026, 11, 25, 21, 16, 17, tzinfo=dt.UTC),
    )  # fmt: skip


def _text(html: str) -> str:
    """The page's words as read: tags out, entities decoded, spaces collapsed."""
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))
    return re.sub(r" ([,.;)])", r"\1", text)


def test_a_bias_alert_page_shows_each_finding_as_figures_and_no_raw_data(root, bias_alert):
    page = root.get(f"/admin/bias/biasalert/{bias_alert.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    text = _text(html)
    assert "e-23" not in html and "3.4984" not in html  # no p-value in scientific notation
    assert '["' not in html and "&quot;bias_type&quot;" not in html and "sample_sizes" not in html
    assert (
        "Disparate impact favourable rate of the final decisions gender female 1,822 9.9% male 883 89.7%"
        in text
    )
    # p and q as a report prints them (one formatter: config.figures.p_value_text)
    assert "ratio 0.11 (under 0.8) z-test under 0.001 under 0.001 critical" in text
    assert "gap 10.9 points Fisher's exact test 0.566 0.566 low" in text
    assert "gap 79.8 points z-test 0.012 not adjusted critical" in text
    assert "0.0001" not in text
    assert "2026-11-25 21:16 UTC" in text and not ISO_STRING.search(text)


def test_the_bias_alert_list_names_types_and_attributes_in_words(root, bias_alert):
    html = root.get("/admin/bias/biasalert/").content.decode()
    assert '["' not in html
    assert "Accuracy disparity, Disparate impact" in html and "gender · credit-v3" in html
    assert "2026-11-25 21:16 UTC" in html


def test_times_carry_their_zone_and_counts_their_separators_on_the_amplification_alert(root):
    alert = AlertFactory(severity="critical", analysis={**ANALYSIS, "decisionsAnalyzed": 1632})
    html = root.get(f"/admin/fairness/amplificationalert/{alert.id}/change/").content.decode()
    text = _text(html)
    assert "Analysed at 2026-11-23 12:00 UTC" in text and "2026-11-23T12:00" not in text
    assert "1,632" in text and "a.m." not in text and "p.m." not in text


def test_an_empty_status_history_says_so_and_a_change_is_listed(root):
    alert = AlertFactory(severity="critical", analysis=ANALYSIS)
    url = f"/admin/fairness/amplificationalert/{alert.id}/change/"
    html = root.get(url).content.decode()
    assert "No status change yet: open since it was raised on" in _text(html)
    assert "status-history'" not in html  # no table of changes, not even its headers
    root.post(url, {"CHANGE_FORM-action": "acknowledge_alerts", "_selected_action": [alert.pk]})
    html = root.get(url).content.decode()
    assert "No status change yet" not in html and "id='status-history'" in html
    assert "staff:root" in _text(html) and " UTC" in _text(html)


def test_export_jobs_show_their_period_on_the_list_and_the_overview(root):
    customer = Customer.objects.get_or_create(id="acme")[0]
    for start, end in (("2026-09-28", "2026-10-27"), ("2026-10-28", "2026-11-26")):
        compliance_services.export_request(
            customer=customer, template="eu_ai_act", format="json",
            start=dt.datetime.fromisoformat(start).replace(tzinfo=dt.UTC),
            end=dt.datetime.fromisoformat(end).replace(tzinfo=dt.UTC) + dt.timedelta(days=1),
            time_period={"from": start, "to": end}, filters={},
        )  # fmt: skip
    job = ExportJob.objects.order_by("created_at").first()
    assert job is not None
    page = _text(root.get(f"/admin/compliance/exportjob/{job.pk}/change/").content.decode())
    assert "Period (UTC days): 2026-09-28 to 2026-10-27" in page and '{"from"' not in page
    assert "none: every decision of the period" in page and "2026-10-28 00:00" not in page  # no exclusive end
    listed = _text(root.get("/admin/compliance/exportjob/").content.decode())
    overview = _text(root.get("/admin/").content.decode())
    for text in (listed, overview):
        assert "2026-09-28 to 2026-10-27" in text and "2026-10-28 to 2026-11-26" in text
        assert " UTC" in text


def test_risk_user_trust_scores_are_on_the_apis_scale_with_two_decimals(root):
    customer = Customer.objects.get_or_create(id="acme")[0]
    RiskUserState.objects.create(customer=customer, user_id="u1", at_risk=True, trust_score=0.6871234)
    html = root.get("/admin/calibration/riskuserstate/").content.decode()
    assert ">0.69<" in html and "0.6871" not in html and "68.7" not in html


@pytest.fixture
def with_probes(api):
    log_all(api, [decision("carol", seconds=60.0) for _ in range(1001)] + [probe("carol", "known_wrong", followed=False) for _ in range(4)])  # fmt: skip


def test_every_page_gives_the_organisation_one_decision_count_with_probes_named(with_probes):
    officer = staff_client("olivia", COMPLIANCE_STAFF)
    label = "acme (1,001 decisions, and 4 vigilance probes)"
    for url in (
        "/admin/",
        "/admin/console/review-effort/",
        "/admin/console/vigilance/",
        "/admin/console/user-calibration/",
    ):
        assert label in officer.get(url).content.decode(), url
    overview = _text(officer.get("/admin/").content.decode())
    assert "1,001 decisions in these 60 days (vigilance probes not counted" in overview


def test_review_effort_covers_the_utc_days_of_a_report_and_says_so(with_probes, api):
    officer = staff_client("olivia", COMPLIANCE_STAFF)
    today = dt.datetime.now(dt.UTC).date()
    first = today - dt.timedelta(days=29)
    text = _text(officer.get("/admin/console/review-effort/?days=30").content.decode())
    assert f"Window: {first.isoformat()} to {today.isoformat()}, whole UTC days" in text
    body = api.get(
        "/v1/oversight/review-effort", {"from": first.isoformat(), "to": today.isoformat(), "limit": 100}
    )
    decisions = sum(row["decisions"] for row in body.json()["data"])
    assert decisions == 1001 and f"Decisions (probes excluded) {decisions:,}" in text
