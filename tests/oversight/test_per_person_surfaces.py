"""Per-person oversight figures outside the Oversight pages (docs/reference/oversight.md, "Who
sees what"): staff without oversight.view_reviewer_figures get reports with the team's figures
only (json, csv and pdf requested in the console), and the Decisions and Audit-trail pages hide
each decision's review time and probe from them. A member of the per-person group and an API key
keep the rows."""

import io
import json

import pytest
from django.http import StreamingHttpResponse
from django.test import Client
from pypdf import PdfReader

from audit.models import AuditEntry, Decision
from compliance.models import ExportJob
from compliance.services import export_run
from console.permissions import COMPLIANCE_STAFF
from oversight.permissions import PER_PERSON_GROUP
from tests.compliance.helpers import at, render, request_export
from tests.oversight.helpers import decision, log_all, probe, staff_client

pytestmark = pytest.mark.django_db

NAMES = ("rick-rubber", "carol-careful")


@pytest.fixture
def seeded(api):
    items = [decision("carol-careful", seconds=60.0) for _ in range(25)]
    items += [decision("rick-rubber", seconds=1.0) for _ in range(25)]
    items += [probe("rick-rubber", "known_wrong", followed=True, review_seconds=2.5) for _ in range(4)]
    items += [probe("carol-careful", "known_wrong", followed=False) for _ in range(4)]
    log_all(api, items)


def _console_request(client: Client, format: str, **extra: str):
    form = {"customer": "acme", "template": "eu_ai_act", "format": format}
    form.update(period_from=at(10)[:10], period_to=at(0)[:10], **extra)
    return client.post("/admin/compliance/exportjob/add/", form)


def _console_report(client: Client, format: str, **extra: str) -> tuple[ExportJob, bytes]:
    r = _console_request(client, format, **extra)
    assert r.status_code == 302, r.content.decode()[:2000]
    job = ExportJob.objects.order_by("-created_at").first()
    assert job is not None
    export_run(export_id=job.pk)
    download = client.get(f"/admin/compliance/exportjob/{job.pk}/download/")
    assert download.status_code == 200 and isinstance(download, StreamingHttpResponse)
    return job, b"".join(download.streaming_content)


def _oversight_of(report: dict) -> dict:
    section = report["sections"]["trust_calibration_analysis"]
    return {"review_effort": section["review_effort"], "vigilance": section["vigilance"]}


def test_a_console_report_of_staff_without_the_permission_carries_team_figures_only(seeded):
    officer = staff_client("olivia", COMPLIANCE_STAFF)
    job, content = _console_report(officer, "json")
    assert job.requested_by == "staff:olivia" and job.per_person_figures is False
    oversight = _oversight_of(json.loads(content))
    text = json.dumps(oversight)
    assert not any(name in text for name in NAMES), text[:2000]
    effort, vigilance = oversight["review_effort"], oversight["vigilance"]
    assert "reviewers" not in effort and "reviewers" not in vigilance
    assert effort["reviewers_withheld"].startswith("Withheld") and vigilance["reviewers_withheld"]
    assert effort["team"]["reviewers"] == 2 and effort["team"]["flagged_reviewers"] == 1
    assert vigilance["totals"]["known_wrong"] == 8 and vigilance["totals"]["caught"] == 4


def test_a_member_of_the_per_person_group_and_an_api_key_get_the_rows(seeded, api):
    lead = staff_client("lena", COMPLIANCE_STAFF, PER_PERSON_GROUP)
    job, content = _console_report(lead, "json")
    assert job.per_person_figures is True
    oversight = _oversight_of(json.loads(content))
    assert [r["user_id"] for r in oversight["review_effort"]["reviewers"]] == list(NAMES)
    assert {r["user_id"] for r in oversight["vigilance"]["reviewers"]} == set(NAMES)
    by_api = render(api, request_export(api, template="eu_ai_act", format="json")["export_id"])
    assert ExportJob.objects.get(pk=by_api["export_id"]).per_person_figures is True
    r = api.get(by_api["download_url"])
    oversight = _oversight_of(json.loads(b"".join(r.streaming_content)))
    assert (
        len(oversight["review_effort"]["reviewers"]) == 2
        and "reviewers_withheld" not in oversight["vigilance"]
    )


def test_the_pdf_and_csv_of_staff_without_the_permission_name_no_reviewer_figure(seeded):
    officer = staff_client("olivia", COMPLIANCE_STAFF)
    _, content = _console_report(officer, "pdf")
    text = " ".join(" ".join((p.extract_text() or "").split()) for p in PdfReader(io.BytesIO(content)).pages)
    # The contents list the heading too: the section is its last occurrence.
    start = text.rindex("Review effort: did the reviewer look?")
    oversight = text[start : text.index("Bias detection summary", start)]
    assert "Quick agreement per reviewer" not in oversight and "Per reviewer" not in oversight
    assert not any(name in oversight for name in NAMES), oversight
    # Review effort and vigilance withhold theirs; the drift monitoring section, printed between
    # them and the bias summary, withholds its reviewer monitors (docs/reference/drift.md).
    withheld = "Withheld: this report was requested in the staff console"
    drift_at = oversight.find("Drift monitoring")
    assert drift_at > 0, oversight
    assert oversight[:drift_at].count(withheld) == 2
    assert oversight[drift_at:].count(withheld) == 1
    assert "Flagged reviewers 1" in oversight
    assert "request the json the same way, in the staff console by such a person" in text  # Appendix C
    _, content = _console_report(officer, "csv")
    header = content.decode().splitlines()[0].split(",")
    assert not {"review_seconds", "review_started_at", "probe"} & set(header)


def test_staff_without_the_permission_cannot_download_a_report_that_holds_the_rows(seeded, api):
    lead = staff_client("lena", COMPLIANCE_STAFF, PER_PERSON_GROUP)
    officer = staff_client("olivia", COMPLIANCE_STAFF)
    with_rows, _ = _console_report(lead, "json")
    by_api = render(api, request_export(api, template="texas_traiga", format="pdf")["export_id"])["export_id"]
    log_only, _ = _console_report(lead, "csv")
    for export_id in (with_rows.pk, by_api):
        r = officer.get(f"/admin/compliance/exportjob/{export_id}/download/", follow=True)
        assert (
            r.redirect_chain[0][1] == 302 and "only members of the oversight per-person" in r.content.decode()
        )
        assert lead.get(f"/admin/compliance/exportjob/{export_id}/download/").status_code == 200
    assert officer.get(f"/admin/compliance/exportjob/{log_only.pk}/download/").status_code == 200


def test_staff_without_the_permission_cannot_narrow_a_report_to_named_reviewers(seeded):
    officer = staff_client("olivia", COMPLIANCE_STAFF)
    r = _console_request(officer, "json", user_ids="rick-rubber")
    assert r.status_code == 200 and "Narrowing a report to named reviewers" in r.content.decode()
    assert not ExportJob.objects.exists()
    lead = staff_client("lena", COMPLIANCE_STAFF, PER_PERSON_GROUP)
    job, _ = _console_report(lead, "csv", user_ids="rick-rubber")
    assert job.filters == {"user_ids": ["rick-rubber"]}


def test_the_decision_and_audit_pages_hide_review_times_and_probes_without_the_permission(seeded):
    timed = Decision.objects.filter(user_id="rick-rubber", probe__isnull=False, review_seconds=2.5).first()
    assert timed is not None
    entry = AuditEntry.objects.get(decision=timed)
    pages = [f"/admin/audit/decision/{timed.pk}/change/", f"/admin/audit/auditentry/{entry.pk}/change/"]
    officer, lead = (
        staff_client("olivia", COMPLIANCE_STAFF),
        staff_client("lena", COMPLIANCE_STAFF, PER_PERSON_GROUP),
    )
    for url in pages:
        hidden = officer.get(url)
        assert hidden.status_code == 200
        html = hidden.content.decode()
        assert "rick-rubber" in html  # the decision itself is shown
        for label in ("Review seconds", "Probe", "known_wrong", "2.5"):
            assert label not in html, (url, label)
        shown = lead.get(url).content.decode()
        assert "Review seconds" in shown and "known_wrong" in shown
    for lookup in ("review_seconds__lt=3", "probe__isnull=False", "probe_kind=known_wrong"):
        assert officer.get(f"/admin/audit/decision/?{lookup}").status_code == 400, lookup
        assert lead.get(f"/admin/audit/decision/?{lookup}").status_code == 200, lookup
    assert officer.get("/admin/audit/auditentry/?review_seconds__lt=3").status_code == 400
