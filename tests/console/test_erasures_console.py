"""Access -> Erasures in the staff console (docs/reference/erasure.md): superusers and compliance
staff request an erasure (subject_id or user_id, reason, legal basis), see the list and each one's
status; every request is recorded in the console's log with the staff user and without the erased
value; under a legal hold the request is refused and recorded; other staff cannot open the pages;
and no console page shows an erased value afterwards."""

import re

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User

from audit.models import AuditEntry, Erasure
from tests.audit.erasure_helpers import CONTEXT, REVIEWER, SUBJECT, found, log
from tests.console.crawl import console_pages
from tests.console.test_admin_site import login, officer, root  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

ADD = "/admin/audit/erasure/add/"


def _form(**fields) -> dict:
    return {
        "customer": "acme",
        "target": "subject_id",
        "value": SUBJECT,
        "reason": "the data subject asked",
        "legal_basis": "gdpr_art_17_1_a",
        "override_minimum": "on",
        **fields,
    }


def test_compliance_staff_request_an_erasure_and_the_console_records_it_without_the_value(api, officer):  # noqa: F811
    log(api, 2, user_id="alice", subject_id=SUBJECT, context=CONTEXT)
    log(api, 1, user_id="alice")
    assert officer.get(ADD).status_code == 200
    response = officer.post(ADD, _form())
    erasure = Erasure.objects.get()
    assert (
        response.status_code == 302 and response["Location"] == f"/admin/audit/erasure/{erasure.pk}/change/"
    )
    assert erasure.status == "completed" and erasure.entries == 2 and erasure.requested_by == "staff:olivia"
    assert AuditEntry.objects.filter(erased=True).count() == 2
    trail = officer.get("/admin/audit/auditentry/?erased__exact=1").content.decode()
    assert trail.count('name="_selected_action"') == 2  # the list's rows: the two erased entries
    page = officer.get(response["Location"]).content.decode()
    assert erasure.pk in page and "completed" in page and "GDPR Art. 17(1)(a): no longer necessary" in page
    listed = officer.get("/admin/audit/erasure/").content.decode()
    assert erasure.pk in listed and "tc-done" in listed
    recorded = LogEntry.objects.get(object_id=erasure.pk)
    assert (
        recorded.user.username == "olivia"
        and "completed (GDPR Art. 17(1)(a): no longer necessary)" in recorded.get_change_message()
    )
    # The legal basis by its label on every page (the list's filter too), never its code; the
    # organisation as text, since its own page (Access -> Customers) answers 403 to compliance staff.
    for html in (page, listed):
        assert "gdpr_art_17_1_a" not in re.sub(r"<[^>]+>", " ", html)
    assert "/admin/keys/customer/" not in page and "acme" in page
    assert officer.get("/admin/keys/customer/acme/change/").status_code == 403
    assert found(f"{recorded.object_repr} {recorded.change_message}", SUBJECT, CONTEXT) == []
    # the same request again erases nothing more, says so, and is recorded too
    again = officer.post(ADD, _form(), follow=True)
    assert "Nothing more to erase" in again.content.decode() and Erasure.objects.count() == 1
    assert LogEntry.objects.filter(object_id=erasure.pk).count() == 2


def test_a_reviewer_erased_in_the_console_leaves_no_trace_on_any_console_page(api, root):  # noqa: F811
    log(api, 3, user_id=REVIEWER, context=CONTEXT, subgroups={"gender": "f"})
    log(api, 2, user_id="bob", subject_id=SUBJECT)
    before = "\n".join(html for _, html in console_pages(root))
    assert found(before, REVIEWER, CONTEXT, SUBJECT) == [
        REVIEWER,
        CONTEXT,
        SUBJECT,
    ]  # the crawl can tell a hit
    root.post(ADD, _form(target="user_id", value=REVIEWER, legal_basis="gdpr_art_17_1_b"))
    root.post(ADD, _form())
    assert list(Erasure.objects.values_list("status", flat=True)) == ["completed", "completed"]
    pages = dict(console_pages(root))
    assert "/admin/audit/erasure/" in pages and len(pages) > 40
    assert [url for url, html in pages.items() if found(html, REVIEWER, CONTEXT, SUBJECT)] == []


def test_under_legal_hold_the_console_refuses_and_records_the_refusal(api, root):  # noqa: F811
    log(api, 1, subject_id=SUBJECT)
    api.put("/v1/retention-policy", {"min_days": 183, "max_days": None, "legal_hold": True}, format="json")
    page = root.post(ADD, _form(), follow=True).content.decode()
    refused = Erasure.objects.get()
    assert refused.status == "refused" and "legal hold" in page and "tc-medium" in page
    assert LogEntry.objects.get(object_id=refused.pk).get_change_message().startswith("Erasure refused")
    assert not AuditEntry.objects.filter(erased=True).exists()


def test_a_request_the_api_would_refuse_is_a_form_error_and_changes_nothing(api, root):  # noqa: F811
    for bad in (_form(value="x" * 129), _form(reason=""), _form(legal_basis="because")):
        page = root.post(ADD, bad)
        html = page.content.decode()
        assert page.status_code == 200 and ("errorlist" in html or "errornote" in html)
    assert not Erasure.objects.exists() and not LogEntry.objects.exists()


def test_staff_outside_compliance_staff_cannot_open_erasures(db):
    plain = login(User.objects.create_user("sam", "sam@example.com", "pw", is_staff=True))
    assert plain.get("/admin/audit/erasure/").status_code == 403
    assert plain.get(ADD).status_code == 403
