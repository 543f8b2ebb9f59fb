"""The console at a laptop's 1,400 x 900 in a real browser (Debian's chromium through Playwright):
every column of the lists an officer works in stays on screen, the overview's counts match the
lists its links open, words never break inside, custom pages look like the rest, a 403 keeps the
console around it and the browser's favicon request is answered."""

import datetime as dt
import urllib.request

import pytest

from tests.console.shared_demo import demo_changed, demo_shared, demo_site, transactional_db  # noqa: F401 (fixtures)
from tests.console.test_browser import (  # noqa: F401 (fixtures)
    PASSWORD,
    SHOTS,
    browser,
    chromium_path,
)

# One demo for the module, on one worker (tests/console/shared_demo.py).
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.layout,
    pytest.mark.xdist_group("console_layout"),
]

WIDTH, HEIGHT = 1400, 900
RIGHT_EDGE = (
    """(selector) => [...document.querySelectorAll(selector)].map(e => e.getBoundingClientRect().right)"""
)
LINES = """(selector) => [...document.querySelectorAll(selector)].map(e => {
  const range = document.createRange(); range.selectNodeContents(e);
  return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; })"""


def _export(customer_id: str) -> None:
    from compliance import services
    from keys.models import Customer

    today = dt.datetime.now(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    job = services.export_request(
        customer=Customer.objects.get(pk=customer_id), template="eu_ai_act", format="json",
        start=today - dt.timedelta(days=29), end=today + dt.timedelta(days=1),
        time_period={"from": (today - dt.timedelta(days=29)).date().isoformat(), "to": today.date().isoformat()},
        filters={},
    )  # fmt: skip
    services.export_run(export_id=job.pk)


@pytest.fixture(scope="module")
def demo_module(django_db_setup, django_db_blocker):
    """The demo and one report of the last 30 days, for every test of the module."""
    with demo_shared(django_db_blocker, prepare=lambda: _export("demo-bank")) as shared:
        yield shared


@pytest.fixture
def page(browser, demo_site):  # noqa: F811 (fixtures imported above)
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(f"{demo_site.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#panel-alerts")
    yield page
    page.close()


def _on_screen(page, selector: str) -> None:
    edges = page.evaluate(RIGHT_EDGE, selector)
    assert edges, selector
    assert max(edges) <= WIDTH, (selector, max(edges))


def test_overview_counts_match_the_lists_their_links_open(page, demo_site):  # noqa: F811
    for severity in ("critical", "high"):
        link = page.locator(f"#panel-alerts tr:has(.tc-{severity}) td.tc-num a").first
        shown = int(link.inner_text())
        link.click()
        page.wait_for_selector("#changelist")
        assert page.locator("#result_list tbody tr").count() == shown, severity
        page.goto(demo_site.url + "/admin/")


def test_list_columns_stay_on_screen_at_1400_px(page, demo_site):  # noqa: F811
    page.goto(demo_site.url + "/admin/compliance/exportjob/")
    _on_screen(page, "#result_list td.field-download a")
    page.goto(demo_site.url + "/admin/audit/auditentry/")
    for field in ("category", "decided", "logged", "short_hash"):
        _on_screen(page, f"#result_list td.field-{field}")
    page.goto(demo_site.url + "/admin/fairness/amplificationalert/")
    _on_screen(page, "#result_list td.field-resolved_by")
    clipped = page.evaluate(
        "[...document.querySelectorAll('#result_list td.field-resolved_by')].filter(e => e.scrollWidth > e.clientWidth).length"
    )
    assert clipped == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "alert-list-1400.png"))


def test_words_never_break_inside_on_the_overview(page):
    lines = page.evaluate(LINES, "#panel-exports th")
    assert lines and all(n == 1 for n in lines), lines  # "Organisation" on one line
    assert page.locator("#panel-exports td", has_text="demo-bank").count() >= 1


def test_custom_pages_have_styled_breadcrumbs(page, demo_site):  # noqa: F811
    page.goto(demo_site.url + "/admin/fairness/amplificationalert/")
    stock = page.evaluate("getComputedStyle(document.querySelector('.breadcrumbs')).backgroundColor")
    for path in ("/admin/console/user-calibration/", "/admin/compliance/exportjob/add/"):
        page.goto(demo_site.url + path)
        assert (
            page.evaluate("getComputedStyle(document.querySelector('.breadcrumbs')).backgroundColor") == stock
        ), path


def test_a_403_keeps_the_console_and_the_favicon_is_served(page, demo_site):  # noqa: F811
    response = page.goto(demo_site.url + "/admin/keys/apikey/")
    assert response is not None and response.status == 403
    assert page.locator("#site-name", has_text="Trustcal staff console").count() == 1
    assert (
        page.locator("#nav-sidebar").count() == 1
        and page.locator("text=You cannot open this page").count() >= 1
    )
    with urllib.request.urlopen(demo_site.url + "/favicon.ico", timeout=10) as icon:
        assert icon.status == 200 and icon.headers["Content-Type"] == "image/svg+xml"
        assert icon.read().startswith(b"<svg")


def test_overview_shows_each_exports_period_and_never_breaks_a_status_or_a_time(page):
    assert page.locator("#panel-exports .tc-period", has_text=" to ").count() >= 1
    lines = page.evaluate(LINES, "#panel-exports td.tc-nowrap")
    # the status on one line ("compl/eted" was seen), the requested time as day and time
    assert lines and all(n in (1, 2) for n in lines), lines
    assert page.locator("#panel-exports td.tc-nowrap", has_text="UTC").count() >= 1
    page.screenshot(path=str(SHOTS / "overview-1400.png"), full_page=True)


def test_changed_alert_and_oversight_pages_fit_1400_px(page, demo_site):  # noqa: F811
    from bias.models import BiasAlert
    from fairness.models import AmplificationAlert

    bias = BiasAlert.objects.order_by("-severity").first()
    amplification = AmplificationAlert.objects.filter(status="open").first()
    assert bias is not None and amplification is not None
    pages = {
        "bias-alert": f"/admin/bias/biasalert/{bias.pk}/change/",
        "bias-alerts": "/admin/bias/biasalert/",
        "amplification-alert": f"/admin/fairness/amplificationalert/{amplification.pk}/change/",
        "review-effort": "/admin/console/review-effort/",
        "vigilance": "/admin/console/vigilance/",
    }
    for shot, path in pages.items():
        page.goto(demo_site.url + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH, path
        page.screenshot(path=str(SHOTS / f"{shot}-1400.png"), full_page=True)
    page.goto(demo_site.url + pages["bias-alert"])
    assert page.evaluate(RIGHT_EDGE, "#bias-findings")[0] <= WIDTH
    assert page.evaluate(LINES, "#bias-findings td.tc-num") and all(
        n == 1 for n in page.evaluate(LINES, "#bias-findings td.tc-num")
    )  # "under 0.001" and "gap 79.8 points" never wrap


CLIPPED = """(selector) => { const t = document.querySelector(selector); const box = t.closest('.results') || t.parentElement;
  const right = Math.max(...[...t.querySelectorAll('tr > *:last-child')].map(e => e.getBoundingClientRect().right));
  return {right, edge: box.getBoundingClientRect().right, hidden: box.scrollWidth - box.clientWidth}; }"""


def _erasures() -> None:
    """A completed erasure of a reviewer and a scheduled one (its due time in the list)."""
    from audit import erasure
    from keys.models import Customer

    bank = Customer.objects.get(pk="demo-bank")
    for user_id, now in (("officer-05", True), ("officer-06", False)):
        erasure.erasure_request(
            customer=bank, target="user_id", value=user_id, reason="left the bank",
            legal_basis="gdpr_art_17_1_f", override_minimum=now, requested_by="staff:olivia",
        )  # fmt: skip


def test_export_jobs_checkpoints_and_erasures_keep_their_last_column_on_screen(page, demo_site, demo_changed):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    for path, shot in (
        ("/admin/compliance/exportjob/", "export-jobs"),
        ("/admin/audit/signedcheckpoint/", "checkpoints"),
        ("/admin/audit/erasure/", "erasures"),
    ):
        if shot == "erasures":
            _erasures()  # last: an erasure withdraws the reports that named the reviewer
        page.goto(demo_site.url + path)
        assert page.locator("#result_list tbody tr").count() >= 1, path
        box = page.evaluate(CLIPPED, "#result_list")
        assert box["right"] <= box["edge"] + 0.5 and box["hidden"] <= 0, (path, box)
        page.screenshot(path=str(SHOTS / f"{shot}-1400.png"), full_page=True)
        if shot == "export-jobs":
            assert page.locator("#result_list td.field-report", has_text=" to ").count() >= 1  # the period
