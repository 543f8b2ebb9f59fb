"""Each template speaks in its own law's words (docs/reference/reports.md, Citations) and prints a
percentage one way (docs/reference/reports.md, How figures are printed): the Texas report's json
says what review effort and vigilance evidence without the EU report's articles, and its note for
withheld rows per reviewer cites no EU article; both reports print "76.1%", never "76.1 %"."""

import io
import json
import re

import pytest
from django.http import StreamingHttpResponse
from pypdf import PdfReader

from compliance.models import ExportJob
from compliance.services import export_run
from console.permissions import COMPLIANCE_STAFF
from tests.compliance.helpers import at, export_file
from tests.oversight.helpers import decision, log_all, probe, staff_client

pytestmark = pytest.mark.django_db

SPACED_PERCENT = re.compile(r"\d[ \u00a0]%")


@pytest.fixture
def seeded(api):
    items = [decision("carol-careful", seconds=60.0) for _ in range(25)]
    items += [decision("rick-rubber", seconds=1.0) for _ in range(25)]
    items += [probe("rick-rubber", "known_wrong", followed=True, review_seconds=2.5) for _ in range(4)]
    log_all(api, items)


def _console_pdf(officer, template: str) -> str:
    form = {"customer": "acme", "template": template, "format": "pdf"}
    r = officer.post(
        "/admin/compliance/exportjob/add/", {**form, "period_from": at(10)[:10], "period_to": at(0)[:10]}
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    job = ExportJob.objects.order_by("-created_at").first()
    assert job is not None
    export_run(export_id=job.pk)
    download = officer.get(f"/admin/compliance/exportjob/{job.pk}/download/")
    assert isinstance(download, StreamingHttpResponse)
    pages = PdfReader(io.BytesIO(b"".join(download.streaming_content))).pages
    return " ".join(" ".join((page.extract_text() or "").split()) for page in pages)


def test_the_texas_json_says_what_oversight_evidences_without_the_eu_articles(api, seeded):
    _, texas = export_file(api, template="texas_traiga", format="json")
    section = json.loads(texas)["sections"]["disclosure_and_human_review"]
    for key in ("review_effort", "vigilance"):
        evidences = section[key]["evidences"]
        assert "Art." not in evidences and "Article" not in evidences, evidences
        assert "under the EU AI Act, which the Texas Act does not require" in evidences
    _, eu = export_file(api, template="eu_ai_act", format="json")
    section = json.loads(eu)["sections"]["trust_calibration_analysis"]
    assert section["review_effort"]["evidences"].startswith("EU AI Act Art. 14(4)(b): ")
    assert section["vigilance"]["evidences"].startswith("EU AI Act Art. 14(4)(d): ")


def test_the_withheld_rows_note_cites_the_eu_article_only_in_the_eu_report(seeded):
    officer = staff_client("olivia", COMPLIANCE_STAFF)  # may not see the rows per reviewer
    texas = _console_pdf(officer, "texas_traiga")
    assert "Withheld: this report was requested in the staff console" in texas
    assert "Art. 26(7)" not in texas and "Art." not in texas
    eu = _console_pdf(officer, "eu_ai_act")
    assert "Withheld: this report was requested in the staff console" in eu and "Art. 26(7)" in eu


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_a_percentage_has_no_space_before_its_sign(api, seeded, template):
    _, content = export_file(api, template=template, format="pdf")
    text = "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(content)).pages)
    assert re.search(r"\d\.\d%", text), "the report prints percentages"
    spaced = [text[max(0, m.start() - 40) : m.end() + 10] for m in SPACED_PERCENT.finditer(text)]
    assert not spaced, spaced


def test_an_interval_prints_as_a_range_under_a_label_in_words():
    from compliance.pdf_tables import label
    from compliance.printing import figure

    assert figure("overtrust_rate_ci", [0.392, 0.562]) == "39.2% to 56.2%"
    assert label("overtrust_rate_ci") == "Over-trust rate, 95% interval"
    assert figure("slope_ci", [4.31, 5.44]) == "4.31 to 5.44"
