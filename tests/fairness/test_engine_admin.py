"""The amplification engine in /engines/status, fairness figures in /metrics, and the staff
admin whose bulk actions go through the PATCH service."""

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.test import Client

from fairness.models import AmplificationAlert
from tests.console.test_admin_site import ANALYSIS
from tests.fairness.factories import AlertFactory, SignalFactory
from tests.fairness.helpers import post_signal

pytestmark = pytest.mark.django_db


def test_amplification_engine_reports_version_1_1_0(api, admin_api):
    post_signal(api)
    engines = {e["name"]: e for e in admin_api.get("/v1/engines/status").json()["engines"]}
    engine = engines["amplification"]
    assert engine["status"] == "operational"
    assert engine["version"] == "1.1.0"
    assert engine["last_activity_at"].endswith("Z")


def test_metrics_count_signals_and_alerts_by_status(api, admin_api):
    post_signal(api)
    AlertFactory()
    AlertFactory(status="resolved")
    body = admin_api.get("/v1/metrics").json()  # platform figures: admin keys only
    assert body["signals_ingested"] == 3  # one over HTTP, two behind the alerts
    assert body["amplification_alerts"] == {"open": 1, "acknowledged": 0, "resolved": 1, "false_positive": 0}


@pytest.fixture
def staff():
    user = User.objects.create_superuser("dana", "dana@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def test_admin_shows_a_signal_read_only_as_figures_not_its_raw_payload(staff):
    signal = SignalFactory(
        raw_payload_json='{"by_group":{"male":0.6,"female":0.4}}', threshold=0.1, passes_threshold=False,
        sample_size=12840, confidence_interval=[0.15, 0.25], privileged_group="male",
        analysis={**ANALYSIS, "decisionsAnalyzed": 1632, "modelDisparityReported": 0.1990874},
    )  # fmt: skip
    page = staff.get(f"/admin/fairness/fairnesssignal/{signal.pk}/change/")
    assert page.status_code == 200
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", page.content.decode())))
    assert "demographic_parity = 0.2 (threshold 0.1: fails)" in text
    assert "Sample: 12,840 · Confidence interval: 0.15 to 0.25" in text
    assert "gender: privileged male, unprivileged chosen by the analysis" in text
    assert "Amplification score" in text and "1,632" in text and "UTC" in text
    assert "Model disparity reported 0.199 " in text and "0.1990874" not in text  # three decimals
    assert "by_group" not in text and "{" not in text and "amplificationScore" not in text
    # The organisation is named, not linked: compliance staff have no page of customers to open.
    assert f"Organisation: {signal.customer_id}" in text
    assert f"/admin/keys/customer/{signal.customer_id}/" not in page.content.decode()
    assert staff.get("/admin/fairness/fairnesssignal/add/").status_code == 403


def test_admin_lists_only_the_alerts_its_filters_select(staff):
    wanted = AlertFactory(severity="critical")
    AlertFactory(severity="medium")
    AlertFactory(severity="critical", status="resolved")
    page = staff.get("/admin/fairness/amplificationalert/?status__exact=open&severity__exact=critical")
    assert page.status_code == 200
    assert list(page.context["cl"].result_list) == [wanted]


def action(staff, name, alerts, **extra):
    data = {"action": name, "_selected_action": [a.pk for a in alerts], **extra}
    return staff.post("/admin/fairness/amplificationalert/", data)


def test_admin_acknowledge_and_false_positive_record_the_staff_user(staff):
    one, two = AlertFactory(), AlertFactory()
    action(staff, "acknowledge_alerts", [one, two])
    action(staff, "mark_false_positive", [two])
    one.refresh_from_db()
    two.refresh_from_db()
    assert one.status == "acknowledged" and one.acknowledged_at is not None
    assert two.status == "false_positive" and two.resolved_at is not None and two.resolved_by == "staff:dana"
    assert [(c.from_status, c.to_status, c.by) for c in two.status_changes.all()] == [
        ("open", "acknowledged", "staff:dana"), ("acknowledged", "false_positive", "staff:dana"),
    ]  # fmt: skip


def test_admin_resolve_asks_for_notes_then_resolves(staff):
    alert = AlertFactory()
    form = action(staff, "resolve_alerts", [alert])
    assert form.status_code == 200 and b"resolution_notes" in form.content
    assert AmplificationAlert.objects.get(pk=alert.pk).status == "open"
    done = action(staff, "resolve_alerts", [alert], apply="1", resolution_notes="retrained the model")
    assert done.status_code == 302
    alert.refresh_from_db()
    assert (alert.status, alert.resolution_notes, alert.resolved_by) == (
        "resolved",
        "retrained the model",
        "staff:dana",
    )
    change = alert.status_changes.get()
    assert (change.by, change.notes) == ("staff:dana", "retrained the model")
