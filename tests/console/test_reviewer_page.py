"""A reviewer's page in a real browser (Chromium through Playwright) at 1,400 and 1,024 px: the
figures are the API's for that reviewer and window, nothing runs off the screen, every reviewer's
name in the console links to it, its decisions are exactly the reviewer's (probes marked only for
staff who may see per-person figures) and review effort, vigilance and drift monitors of one
reviewer stay hidden from staff without oversight.view_reviewer_figures."""

import datetime as dt
import json
import urllib.parse
import urllib.request

import pytest
from django.contrib.auth.models import Group, User

from config.models import StaffOrganisation
from console.permissions import COMPLIANCE_STAFF
from oversight.permissions import PER_PERSON_GROUP
from tests.console.shared_demo import demo_shared, demo_site, transactional_db  # noqa: F401 (fixtures)
from tests.console.test_browser import (  # noqa: F401 (fixtures)
    PASSWORD,
    SHOTS,
    api_get,
    browser,
    chromium_path,
)

# One demo for the module, on one worker (tests/console/shared_demo.py).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("reviewer_page")]

REVIEWER = "officer-28"  # has decisions and vigilance probes in the demo
TODAY = dt.datetime.now(dt.UTC).date()
FROM, TO = (TODAY - dt.timedelta(days=89)).isoformat(), TODAY.isoformat()  # the demo's 90 days
OFF_SCREEN = """(width) => [...document.querySelectorAll('#content-main *')]
  .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > width + 0.5)
  .map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 5)"""
CLIPPED = """() => [...document.querySelectorAll('.tc-panel')].filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => e.id)"""


def api_post(base: str, path: str, key: str, body: dict) -> dict:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def _user(name: str, *, per_person: bool) -> None:
    user = User.objects.create_user(name, f"{name}@demo-bank.example", PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name=COMPLIANCE_STAFF))
    if per_person:
        user.groups.add(Group.objects.get(name=PER_PERSON_GROUP))
    StaffOrganisation.objects.create(user=user, customer_id="demo-bank")


def _monitor() -> None:
    from drift import services
    from drift.inputs import MonitorCreateInput
    from keys.models import Customer

    body = MonitorCreateInput(chart="probe_sprt", scope="user", user_id=REVIEWER, name="Probes of officer-28")
    services.monitor_create(customer=Customer.objects.get(pk="demo-bank"), body=body)


def _prepare() -> None:
    """What every test of the module starts from: pat, compliance staff with per-person figures, and
    a drift monitor on the reviewer's probes. The tests only read the demo, but for the first's call
    of the API's trust score, which records whether the reviewer is at risk: the page's #risk-state
    line, which no test here checks (they pass run in either order)."""
    _user("pat", per_person=True)
    _monitor()


@pytest.fixture(scope="module")
def demo_module(django_db_setup, django_db_blocker):
    with demo_shared(django_db_blocker, prepare=_prepare) as shared:
        yield shared


def _signed_in(browser, base: str, name: str, width: int):  # noqa: F811 (the fixture, passed on)
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", name)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#panel-alerts")
    return page


def _reviewer_url(base: str) -> str:
    query = urllib.parse.urlencode({"customer": "demo-bank", "user": REVIEWER, "from": FROM, "to": TO})
    return f"{base}/admin/console/reviewer/?{query}"


def _fits(page, width: int, shot: str) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width, shot
    assert page.evaluate(OFF_SCREEN, width) == [], shot
    assert page.evaluate(CLIPPED) == [], shot
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)


def _figure(page, label: str) -> str:
    return page.locator(f"#reviewer-figures tr:has(th:text-is('{label}')) td").inner_text().strip()


def test_reviewer_page_shows_the_apis_figures_and_fits_both_widths(browser, demo_site):  # noqa: F811
    base, key = demo_site.url, demo_site.key
    api = api_post(base, "/v1/trust-score", key, {"user_id": REVIEWER, "from": FROM, "to": TO})
    effort = api_get(base, f"/v1/oversight/review-effort?user_id={REVIEWER}&from={FROM}&to={TO}", key)[
        "data"
    ][0]
    vigilance = api_get(base, f"/v1/oversight/vigilance?user_id={REVIEWER}&from={FROM}&to={TO}", key)["data"][
        0
    ]
    trend = api_get(base, f"/v1/trust-score/trend?user_id={REVIEWER}&from={FROM}&to={TO}&interval=week", key)
    for width in (1400, 1024):
        page = _signed_in(browser, base, "pat", width)
        page.goto(_reviewer_url(base))
        assert page.locator("h1", has_text=f"Reviewer {REVIEWER}").count() == 1
        assert _figure(page, "Decisions") == f"{api['decisions_analyzed']:,}"
        assert _figure(page, "Trust score") == f"{api['trust_score']:.2f}"
        assert _figure(page, "Reliance gap") == f"{api['reliance_gap']:.2f}"
        assert _figure(page, "Category") == api["category"]
        assert _figure(page, "Over-trust rate").startswith(f"{api['overtrust_rate'] * 100:.1f}%")
        # The trend: a row per period with decisions, as the API's weekly points.
        assert page.locator("#trend-points tbody tr").count() == sum(
            1 for p in trend["points"] if p["decisions"]
        )
        assert page.locator("#reviewer-trend svg").count() == 1
        # Review effort and vigilance: the API's rows for the reviewer.
        effort_text = page.locator("#reviewer-effort").inner_text()
        assert f"{effort['quick_agreements']} of {effort['timed_decisions']} timed" in effort_text
        vigilance_text = page.locator("#reviewer-vigilance").inner_text()
        assert f"{vigilance['caught']} of {vigilance['known_wrong']}" in vigilance_text
        # Decisions: exactly the reviewer's, probes marked; the monitor on them listed.
        probes = vigilance["probes"]
        marked = page.locator("#decision-rows tr.tc-probe .tc-badge", has_text="probe").count()
        assert (
            marked == page.locator("#decision-rows tr.tc-probe").count() <= probes
        )  # the newest 25 rows' probes
        assert f"{probes} of them vigilance probe" in page.locator("#reviewer-decisions").inner_text()
        assert page.locator("#reviewer-monitors a", has_text="Probes of officer-28").count() == 1
        _fits(page, width, f"reviewer-{width}")
        page.close()

    # The list behind "All of them": the decision list filtered on exactly this reviewer and window.
    page = _signed_in(browser, base, "pat", 1400)
    page.goto(_reviewer_url(base))
    total = api["decisions_analyzed"] + vigilance["probes"]
    assert f"{total} decisions of exactly this reviewer" in page.locator("#reviewer-decisions").inner_text()
    page.click("#all-decisions")
    page.wait_for_selector("#changelist")
    assert page.locator("#result_list tbody tr").count() == total
    users = set(page.locator("#result_list td.field-reviewer").all_inner_texts())
    assert users == {REVIEWER}
    assert page.locator("#result_list td.field-probe_mark .tc-badge").count() == probes
    page.close()


def test_every_reviewer_name_links_to_their_page(browser, demo_site):  # noqa: F811
    base = demo_site.url
    page = _signed_in(browser, base, "pat", 1400)
    for path in (
        "/admin/console/user-calibration/",
        "/admin/console/review-effort/",
        "/admin/console/vigilance/",
        "/admin/audit/decision/",
        "/admin/audit/auditentry/",
        "/admin/calibration/userdailyaggregate/",
        "/admin/drift/driftmonitor/",
    ):
        page.goto(base + path)
        link = page.locator("a.tc-reviewer").first
        name = link.inner_text().strip()
        link.click()
        page.wait_for_selector("#reviewer-figures")
        assert page.locator("h1", has_text=f"Reviewer {name}").count() == 1, path
        assert page.locator("#reviewer-form input[name=user]").input_value() == name, path
    # A decision's own page links to its reviewer too.
    page.goto(base + "/admin/audit/decision/")
    page.locator("#result_list th a").first.click()
    page.locator("a.tc-reviewer").first.click()
    page.wait_for_selector("#reviewer-figures")
    page.close()


def test_staff_without_per_person_permission_see_no_reviewer_oversight(browser, demo_site):  # noqa: F811
    base = demo_site.url
    page = _signed_in(browser, base, "olivia", 1400)  # compliance staff, no per-person figures
    page.goto(_reviewer_url(base))
    assert page.locator("#reviewer-figures").count() == 1  # calibration figures: compliance staff see them
    assert page.locator("#per-person-withheld").count() == 1
    for hidden in ("#reviewer-effort", "#reviewer-vigilance", "#reviewer-monitors", "#rubber-stamp-state"):
        assert page.locator(hidden).count() == 0, hidden
    assert page.locator("#decision-rows .tc-badge", has_text="probe").count() == 0
    assert "vigilance probe" not in page.locator("#reviewer-decisions").inner_text()
    _fits(page, 1400, "reviewer-team-only-1400")
    page.click("#all-decisions")
    page.wait_for_selector("#changelist")
    assert page.locator("#result_list th.column-probe_mark").count() == 0
    # Another organisation's reviewer: not found, as every page of another organisation.
    response = page.goto(f"{base}/admin/console/reviewer/?customer=other-bank&user={REVIEWER}")
    assert response is not None and response.status == 404
    page.close()
