"""The staff console in a real browser: headless Chromium (Debian's `chromium`, driven by Playwright
for Python, nothing downloaded) against a live server holding the demo organisation. A compliance
officer signs in, filters open medium alerts, resolves one with notes, and the API shows the new
status and the officer in the status history; the keys pages stay closed to them. Screenshots of the
overview, the alert list and an alert page go to var/screenshots/."""

import datetime as dt
import json
import os
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.admin.utils import unquote
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from config.models import StaffOrganisation
from console.permissions import COMPLIANCE_STAFF
from tests.conftest import make_key

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("TRUSTCAL_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
# As root here, and on a machine with a closed network: no sandbox, no background fetches.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip
PASSWORD = "demo-officer-password-1"


def _missing(reason: str) -> None:
    """Skip with the reason on a developer's machine; under CI=true the browser tests must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true requires the browser tests to run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium_path() -> str:
    found = shutil.which(CHROMIUM) or shutil.which("chromium")
    if found is None:
        _missing(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium (README, Tests and CI)")
    return str(found)


@pytest.fixture(scope="module")
def browser(chromium_path):
    """One Chromium for the module's tests; each test opens its own pages (a page of its own
    context: cookies and storage are the test's)."""
    try:
        from playwright import sync_api
    except ImportError:
        _missing("playwright is not installed: make install (a dev dependency)")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # synchronous and made between browser steps, never concurrently with them.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


def demo_seed() -> str:
    """The demo organisation and officer olivia (compliance staff of demo-bank); an API key of demo-bank."""
    call_command("seed_demo", "--no-users", stdout=open(os.devnull, "w"))  # noqa: SIM115
    officer = User.objects.create_user("olivia", "olivia@demo-bank.example", PASSWORD, is_staff=True)
    officer.groups.add(Group.objects.get(name=COMPLIANCE_STAFF))
    StaffOrganisation.objects.create(user=officer, customer_id="demo-bank")
    return make_key("demo-bank").value


@pytest.fixture
def demo(transactional_db):
    """A demo of the test's own, for a test that changes it (pytest-django empties the database after)."""
    return demo_seed()


def api_get(base: str, path: str, key: str) -> dict:
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def signed_in(browser, base: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#panel-alerts")
    return page


def test_officer_resolves_an_open_medium_alert_in_the_browser_and_the_api_shows_it(
    browser, demo, live_server
):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = signed_in(browser, live_server.url)
    assert "Trustcal staff console" in page.content()
    page.screenshot(path=str(SHOTS / "overview.png"), full_page=True)

    # Filter open medium alerts (the demo's top amplification severity) with the list's own filters.
    page.click("#panel-alerts >> text=All open amplification alerts")
    filters = page.locator("#changelist-filter")
    filters.get_by_role("link", name="Medium", exact=True).click()
    page.wait_for_url("**severity__exact=medium**")
    # The overview counts open and acknowledged alerts; its link lists exactly those.
    assert "status__in=open%2Cacknowledged" in page.url
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 2  # the demo's open medium alert and its acknowledged one
    assert rows.first.locator(".tc-badge.tc-medium").count() == 1
    page.screenshot(path=str(SHOTS / "alert-list.png"), full_page=True)

    rows.first.locator("th a").first.click()
    page.wait_for_selector("text=AI and human rates")
    alert_id = unquote(urllib.parse.urlsplit(page.url).path.rstrip("/").split("/")[-2])  # admin-quoted pk
    page.screenshot(path=str(SHOTS / "alert-page.png"), full_page=True)

    # Resolve it from its own page, with notes.
    page.select_option("select[name='CHANGE_FORM-action']", "resolve_alerts")
    page.click("button[name='index'], button.button[type=submit] >> nth=0")
    page.fill("#id_resolution_notes", "Checked 25 declined files with the desk lead; retraining scheduled.")
    page.click("input[type=submit][value^='Resolve']")
    page.wait_for_selector("text=1 alert(s) set to resolved")

    alert = api_get(live_server.url, f"/v1/bias/amplification/{alert_id}", demo)
    assert alert["status"] == "resolved" and alert["resolvedBy"] == "staff:olivia"
    last = alert["statusHistory"][-1]
    assert (last["from"], last["to"], last["by"]) == ("open", "resolved", "staff:olivia")
    assert last["notes"].startswith("Checked 25 declined files")

    # The keys pages are closed to compliance staff.
    for path in ("/admin/keys/apikey/", "/admin/keys/apikey/new/", "/admin/keys/adminauditlog/"):
        response = page.goto(live_server.url + path)
        assert response is not None and response.status == 403, path
    page.close()


def test_officer_requests_a_report_and_downloads_it(browser, demo, live_server):
    from compliance.models import ExportJob
    from compliance.services import export_run

    page = signed_in(browser, live_server.url)
    page.goto(f"{live_server.url}/admin/compliance/exportjob/add/")
    page.select_option("#id_customer", "demo-bank")
    page.select_option("#id_template", "eu_ai_act")
    page.select_option("#id_format", "json")
    today = dt.datetime.now(dt.UTC).date()
    page.fill("#id_period_from", (today - dt.timedelta(days=60)).isoformat())
    page.fill("#id_period_to", (today - dt.timedelta(days=31)).isoformat())
    page.click("input[type=submit][value='Request report']")
    page.wait_for_selector("text=requested; it appears here")
    job = ExportJob.objects.get(customer_id="demo-bank")
    assert job.requested_by == "staff:olivia"
    export_run(export_id=job.pk)  # what a worker does with the queued job
    page.reload()
    with page.expect_download() as download:
        page.click(f"a[href$='/{job.pk}/download/']")
    report = json.loads(Path(download.value.path()).read_text())
    summary = report["sections"]["executive_summary"]
    # The demo's older month: its over-trusting reviewers and open drift alarms need review
    # (README, seed_demo), never COMPLIANT; its critical bias alert is in the recent month.
    assert summary["compliance_status"] == "NEEDS_REVIEW", summary["compliance_status_reason"]
    page.close()


def test_officer_requests_an_erasure_from_the_access_group_and_sees_its_status(browser, demo, live_server):
    from audit.models import Decision, Erasure

    reviewer = Decision.objects.filter(customer_id="demo-bank").values_list("user_id", flat=True).first()
    page = signed_in(browser, live_server.url)
    page.goto(f"{live_server.url}/admin/group/access/")
    page.get_by_role("link", name="Erasures", exact=True).click()
    page.get_by_role("link", name="Add erasure").click()
    page.select_option("#id_customer", "demo-bank")
    page.check("input[name=target][value=user_id]")
    page.fill("#id_value", reviewer)
    page.fill("#id_reason", "The reviewer left the bank and asked for erasure.")
    page.select_option("#id_legal_basis", "gdpr_art_17_1_a")
    page.check("#id_override_minimum")
    page.click("input[type=submit][value='Request erasure']")
    page.wait_for_selector("text=entries erased")
    erasure = Erasure.objects.get(customer_id="demo-bank")
    assert erasure.status == "completed" and erasure.requested_by == "staff:olivia" and erasure.entries > 0
    assert page.locator(".tc-badge.tc-done").count() == 1
    page.screenshot(path=str(SHOTS / "erasure.png"), full_page=True)
    page.goto(f"{live_server.url}/admin/audit/decision/?q={erasure.pseudonym}")
    assert reviewer not in page.content() and page.locator("#result_list tbody tr").count() > 0
    page.close()


def test_officer_acknowledges_a_drift_alarm_and_the_api_shows_it(browser, demo, live_server):
    """The demo's open drift alarm, from the Oversight group: its page shows the run's chart, the
    officer acknowledges it with a disposition and a note, and the API shows staff:olivia."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = signed_in(browser, live_server.url)
    page.goto(f"{live_server.url}/admin/group/oversight/")
    page.get_by_role("link", name="Drift alarms").first.click()
    page.wait_for_selector("#result_list")
    rows = page.locator("#result_list tbody tr")
    assert rows.count() >= 1
    assert rows.first.locator("td.field-status").inner_text() == "Open"  # open alarms first
    page.screenshot(path=str(SHOTS / "drift-alarms.png"), full_page=True)
    rows.first.locator("th a").first.click()
    page.wait_for_selector("#acknowledge-form")
    assert page.locator("#alarm-chart").count() == 1
    alarm_id = unquote(urllib.parse.urlsplit(page.url).path.rstrip("/").split("/")[-2])
    page.screenshot(path=str(SHOTS / "drift-alarm.png"), full_page=True)
    page.select_option("#id_disposition", "model_retrained")
    page.fill("#id_note", "v2.3 recalibrated on the v2.2 outcomes.")
    page.click("#acknowledge-form button[type=submit]")
    page.wait_for_selector("#alarm-status >> text=acknowledged")
    alarm = api_get(live_server.url, f"/v1/drift-alarms/{alarm_id}", demo)
    assert alarm["status"] == "acknowledged" and alarm["acknowledged_by"] == "staff:olivia"
    assert alarm["disposition"] == "model_retrained"
    page.goto(f"{live_server.url}/admin/drift/driftmonitor/{alarm['monitor_id']}/change/")
    assert page.locator("#monitor-chart").count() == 1 and page.locator("#monitor-parameters").count() == 1
    page.screenshot(path=str(SHOTS / "drift-monitor.png"), full_page=True)
    page.close()
