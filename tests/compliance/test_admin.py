"""Reports in the Django admin: request a report with the form (the same service as POST
/export), see it listed with status and size, download it; the action is logged."""

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User

from compliance.models import ExportJob
from compliance.services import export_run
from tests.compliance.helpers import at, seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("auditor", "auditor@example.com", "pw"))
    return client


def test_request_a_report_in_the_admin_then_download_it(staff, api):
    seed(api, 15)
    r = staff.post(
        "/admin/compliance/exportjob/add/",
        {
            "customer": "acme",
            "template": "eu_ai_act",
            "format": "csv",
            "period_from": at(10)[:10],
            "period_to": at(0)[:10],
            "user_ids": "ana, ben",
            "model_ids": "",
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    job = ExportJob.objects.get()
    assert job.customer_id == "acme" and job.requested_by == "staff:auditor"
    assert job.filters == {"user_ids": ["ana", "ben"]}
    assert LogEntry.objects.filter(object_id=job.pk, user__username="auditor").exists()
    listing = staff.get("/admin/compliance/exportjob/").content.decode()
    assert job.pk in listing and "queued" in listing
    export_run(export_id=job.pk)
    listing = staff.get("/admin/compliance/exportjob/").content.decode()
    assert f"/admin/compliance/exportjob/{job.pk}/download/" in listing
    r = staff.get(f"/admin/compliance/exportjob/{job.pk}/download/")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    lines = b"".join(r.streaming_content).decode().splitlines()
    assert len(lines) == 1 + sum(1 for i in range(15) if i % 3 in (0, 1))  # ana and ben


def test_the_admin_form_refuses_a_period_that_ends_before_it_starts(staff, api):
    r = staff.post(
        "/admin/compliance/exportjob/add/",
        {
            "customer": "acme",
            "template": "eu_ai_act",
            "format": "pdf",
            "period_from": "2026-11-10",
            "period_to": "2026-11-01",
        },
    )
    assert r.status_code == 200
    assert "must not be after" in r.content.decode()
    assert not ExportJob.objects.exists()
