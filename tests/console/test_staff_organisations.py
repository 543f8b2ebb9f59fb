"""Staff see their organisations (docs/reference/access.md, "Staff and their organisations"): a
compliance officer assigned `acme` walks every URL of the console's URL resolver, each filled
with every id of another organisation (`globex`), and meets 403, 404 or a page without any of
globex's rows or filter choices; the forms refuse globex; unassigned staff see no organisation;
seed_demo's officer is assigned the demo bank."""

import re

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import URLPattern, URLResolver

from audit.models import Erasure
from compliance.models import ExportJob
from config.admin_site import TASK_GROUPS, _registry
from config.models import StaffOrganisation
from console import demo
from console.permissions import COMPLIANCE_STAFF
from keys.models import Customer
from tests.conftest import client_for, make_key
from tests.console.test_admin_site import login
from tests.system.test_tenancy import FOREIGN, _seed_foreign_customer

pytestmark = pytest.mark.django_db

OWN = "acme"


@pytest.fixture
def foreign(settings) -> None:
    _seed_foreign_customer(settings)
    api = client_for(make_key(FOREIGN, "enterprise").value)
    policy = {"min_days": 183, "max_days": None, "legal_hold": False}
    assert api.put("/v1/retention-policy", policy, format="json").status_code == 200
    erased = {"user_id": f"{FOREIGN}-officer-9", "reason": "asked", "legal_basis": "gdpr_art_17_1_a",
              "override_minimum": True}  # fmt: skip
    assert api.post("/v1/erasures", erased, format="json").status_code == 202
    own = client_for(make_key(OWN, "enterprise").value)
    body = {"user_id": "own-officer", "ai_recommendation": "approve", "ai_confidence": 0.9,
            "user_decision": "approve", "model_id": "own-model"}  # fmt: skip
    assert own.post("/v1/log", body, format="json").status_code == 201


def _officer(*organisations: str) -> Client:
    user = User.objects.create_user("olivia", "olivia@example.com", "pw", is_staff=True)
    user.groups.add(Group.objects.get(name=COMPLIANCE_STAFF))
    for customer_id in organisations:
        StaffOrganisation.objects.create(user=user, customer_id=customer_id)
    return login(user)


def _foreign_ids(model) -> list[str]:
    """Every pk of the model's rows of the other organisation (any path to its customer)."""
    model_admin = admin.site._registry[model]
    field = model_admin.organisation_field
    if field is None:
        return [str(pk) for pk in model._default_manager.values_list("pk", flat=True)[:20]]
    rows = model._default_manager.filter(**{field: FOREIGN})
    return [str(pk) for pk in rows.values_list("pk", flat=True)[:20]]


def _fill(route: str, values: list[str]) -> list[str]:
    """The URLs of a route with each value in its arguments (path converters and regex groups)."""
    argument = re.compile(r"<(?:\w+:)?\w+>|\(\?P<\w+>[^)]*\)")
    if not argument.search(route):
        return [route]
    return [argument.sub(value, route) for value in values or ["x"]]


def console_urls() -> list[str]:
    """Every URL of the console's URL resolver, each argument filled with every foreign id."""
    urls: list[str] = []
    models = {f"{m._meta.app_label}/{m._meta.model_name}/": m for m in admin.site._registry}
    special = {
        "console/<slug:name>/": list(_registry.pages),
        "group/<slug:slug>/": [group.slug for group in TASK_GROUPS],
    }

    def walk(patterns: list, prefix: str, values: list[str]) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                model = models.get(route)
                walk(pattern.url_patterns, route, _foreign_ids(model) if model else values)
            elif isinstance(pattern, URLPattern):
                fill = special.get(route, values)
                urls.extend("/admin/" + url.lstrip("^").replace("$", "") for url in _fill(route, fill))

    walk(admin.site.get_urls(), "", [])
    return sorted(set(urls))


def test_a_staff_user_of_one_organisation_sees_nothing_of_another_on_any_console_url(foreign):
    officer = _officer(OWN)
    urls = console_urls()
    assert len(urls) > 100 and any(FOREIGN in url or "aud_" in url for url in urls)
    seen = []
    for url in urls:
        for query in ("", f"?customer={FOREIGN}", f"?customer__id__exact={FOREIGN}"):
            page = officer.get(url + query)
            if page.status_code in (302, 403, 404, 405):
                continue
            assert page.status_code == 200, (url + query, page.status_code)
            body = b"".join(page.streaming_content) if page.streaming else page.content
            # Without a query, the name itself; with one (echoed in the page's links), its rows' ids
            # (every user, model and decision id of it starts with the name) and the name as text.
            markers = [FOREIGN] if not query else [f"{FOREIGN}-", f">{FOREIGN}<", f">{FOREIGN} ("]
            if any(marker.encode() in body for marker in markers):
                seen.append(url + query)
    assert seen == []
    # The walk saw pages with rows: the officer's own organisation shows.
    own = officer.get("/admin/audit/decision/").content.decode()
    assert "own-officer" in own or "own-model" in own


def test_filter_choices_list_no_other_organisation(foreign):
    officer = _officer(OWN)
    for url in ("/admin/audit/decision/", "/admin/audit/erasure/", "/admin/bias/biasalert/",
                "/admin/fairness/amplificationalert/", "/admin/compliance/exportjob/",
                "/admin/audit/retentionpolicy/"):  # fmt: skip
        page = officer.get(url)
        assert page.status_code == 200, url
        assert FOREIGN not in page.content.decode(), url
    # A superuser sees both in the same filter.
    root = login(User.objects.create_superuser("root", "root@example.com", "pw"))
    assert FOREIGN in root.get("/admin/audit/decision/").content.decode()


def test_the_erasure_and_report_forms_refuse_another_organisation(foreign):
    officer = _officer(OWN)
    form = officer.get("/admin/audit/erasure/add/").content.decode()
    assert FOREIGN not in form and f'value="{OWN}"' in form
    before = Erasure.objects.count()
    answer = officer.post(
        "/admin/audit/erasure/add/",
        {"customer": FOREIGN, "target": "user_id", "value": f"{FOREIGN}-officer-0", "reason": "x",
         "legal_basis": "gdpr_art_17_1_a", "override_minimum": "on"},
    )  # fmt: skip
    assert answer.status_code == 200 and Erasure.objects.count() == before
    exports = ExportJob.objects.count()
    answer = officer.post(
        "/admin/compliance/exportjob/add/",
        {"customer": FOREIGN, "template": "eu_ai_act", "format": "json", "period_from": "2026-01-01",
         "period_to": "2026-01-31"},
    )  # fmt: skip
    assert answer.status_code == 200 and ExportJob.objects.count() == exports
    answer = officer.post(
        "/admin/audit/retentionpolicy/add/", {"customer": FOREIGN, "min_days": 183, "legal_hold": "on"}
    )
    assert answer.status_code in (200, 403)
    assert not Customer.objects.get(pk=FOREIGN).retention_policy.legal_hold


def test_an_action_on_another_organisations_rows_changes_nothing(foreign):
    from fairness.models import AmplificationAlert

    officer = _officer(OWN)
    ids = list(AmplificationAlert.objects.filter(customer_id=FOREIGN).values_list("pk", flat=True))
    assert ids
    officer.post("/admin/fairness/amplificationalert/", {"action": "acknowledge", "_selected_action": ids})
    assert set(AmplificationAlert.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"open"}


def test_unassigned_staff_see_no_organisation(foreign):
    officer = _officer()
    for url in (
        "/admin/audit/decision/",
        "/admin/audit/auditentry/",
        "/admin/",
        "/admin/console/user-calibration/",
    ):
        body = officer.get(url).content.decode()
        assert FOREIGN not in body and "own-officer" not in body and "own-model" not in body, url


def test_seed_demo_assigns_its_officer_to_the_demo_bank():
    Customer.objects.create(id="demo-bank")
    demo._users(demo.Report(), create_users=True)
    officer = User.objects.get(username=demo.OFFICER)
    assert list(StaffOrganisation.objects.filter(user=officer).values_list("customer_id", flat=True)) == [
        "demo-bank"
    ]
    demo._users(demo.Report(), create_users=True)  # a second run changes nothing
    assert StaffOrganisation.objects.filter(user=officer).count() == 1


def test_access_users_assigns_organisations():
    Customer.objects.create(id=OWN)
    root = login(User.objects.create_superuser("root", "root@example.com", "pw"))
    staff = User.objects.create_user("sam", "sam@example.com", "pw", is_staff=True)
    page = root.get(f"/admin/auth/user/{staff.pk}/change/").content.decode()
    assert "staff_organisations-0-customer" in page
    listed = root.get("/admin/auth/user/").content.decode()
    assert "none" in listed and "every one" in listed
