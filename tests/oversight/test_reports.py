"""Review effort and vigilance in both report templates (docs/reference/oversight.md,
"In the compliance reports"): the data under their keys with the Art. 14(4) point each
evidences, and the PDF's sections printed as a reader expects them."""

import io
import json

import pytest
from pypdf import PdfReader

from tests.compliance.helpers import export_file
from tests.oversight.helpers import decision, log_all, probe

pytestmark = pytest.mark.django_db

PLACES = {"eu_ai_act": "trust_calibration_analysis", "texas_traiga": "disclosure_and_human_review"}


def _seed(api):
    items = [decision("carol", seconds=60.0, followed=i % 4 != 0) for i in range(40)]
    items += [decision("rick", seconds=1.5, followed=True) for _ in range(30)]
    items += [probe("carol", "known_wrong", followed=False) for _ in range(12)]
    items += [probe("rick", "known_wrong", followed=True) for _ in range(8)]
    items += [probe("rick", "known_right", followed=True) for _ in range(5)]
    log_all(api, items)


@pytest.mark.parametrize("template", list(PLACES))
def test_both_templates_carry_review_effort_and_vigilance_with_their_article_point(api, template):
    _seed(api)
    _, content = export_file(api, template=template, format="json")
    section = json.loads(content)["sections"][PLACES[template]]
    effort, vigilance = section["review_effort"], section["vigilance"]
    # Each template says what they evidence in its own law's words (docs/reference/reports.md, Citations).
    if template == "eu_ai_act":
        assert effort["evidences"].startswith("EU AI Act Art. 14(4)(b)")
        assert vigilance["evidences"].startswith("EU AI Act Art. 14(4)(d)")
    else:
        for evidences in (effort["evidences"], vigilance["evidences"]):
            assert evidences.startswith(
                "What this evidences under the EU AI Act, which the Texas Act does not require"
            )
    api_effort = api.get("/v1/oversight/review-effort", {"from": "2000-01-01"}).json()
    assert effort["reviewers"] == api_effort["data"] and effort["models"] == api_effort["models"]
    assert effort["team"]["flagged_reviewers"] == 1 and effort["team"]["decisions"] == 70
    assert vigilance["totals"]["known_wrong"] == 20 and vigilance["totals"]["caught"] == 12
    assert [r["user_id"] for r in vigilance["reviewers"]] == ["rick", "carol"]


def test_report_filters_narrow_the_oversight_figures(api):
    _seed(api)
    _, content = export_file(api, template="eu_ai_act", format="json", filters={"user_ids": ["rick"]})
    section = json.loads(content)["sections"]["trust_calibration_analysis"]
    assert [r["user_id"] for r in section["review_effort"]["reviewers"]] == ["rick"]
    assert section["vigilance"]["totals"]["probes"] == 13


@pytest.mark.parametrize("template", list(PLACES))
def test_the_pdf_prints_both_sections_as_a_reader_expects(api, template):
    _seed(api)
    _, content = export_file(api, template=template, format="pdf")
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)
    text = " ".join(text.replace("\u00a0", " ").split())
    assert "Review effort: did the reviewer look?" in text
    assert "Vigilance: would the reviewer catch a wrong AI answer?" in text
    if template == "eu_ai_act":
        assert "Art. 14(4)(b)" in text and "Art. 14(4)(d)" in text
    else:  # the Texas report cites only its own law, and says where a point is the EU AI Act's
        assert "Art. 14" not in text and "under the EU AI Act, which the Texas Act does not require" in text
    assert "100.0%" in text  # rick's quick-agreement rate, as a percentage with one decimal
    assert "12 of 20" in text  # known_wrong probes caught
    assert "d' not measured where shown: no known_right probe" in text  # carol's d', said once
    for absent in ("None", "null", "nan"):
        assert f" {absent} " not in f" {text} "
