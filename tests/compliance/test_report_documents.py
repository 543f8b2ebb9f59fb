"""The PDF reports as documents an auditor files (docs/reference/reports.md): PDF/A-3b with the
decision log as an associated file, figures printed as a reader expects them, every alert with
its status history, and each template naming only its own status."""

import io
import re

import pytest
from django.core.management import call_command
from pypdf import PdfReader

from tests.compliance.helpers import at, export_file, seed
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db

# What a program prints for an absent value, and cut text.
LEAKS = re.compile(r"\bNone\b|\bnull\b|\bnan\b|\{'|\['|…|\.\.\.")
STATUSES = re.compile(r"NON_COMPLIANT|NEEDS_REVIEW|\bCOMPLIANT\b")
NOTE = "Checked 25 declined files with the desk lead; overrides now need a reason code."


def _text(content: bytes) -> str:
    return " ".join(
        " ".join((page.extract_text() or "").split()) for page in PdfReader(io.BytesIO(content)).pages
    )


def _assert_pdf_a3b(content: bytes) -> None:
    root = PdfReader(io.BytesIO(content)).trailer["/Root"]
    xmp = root["/Metadata"].get_object().get_data().decode()
    assert 'pdfaid:part="3"' in xmp and 'pdfaid:conformance="B"' in xmp, xmp
    intent = root["/OutputIntents"][0].get_object()
    assert intent["/S"] == "/GTS_PDFA1" and "sRGB" in intent["/OutputConditionIdentifier"]
    assert intent["/DestOutputProfile"].get_object().get_data()[36:40] == b"acsp"  # an ICC profile
    info = PdfReader(io.BytesIO(content)).metadata
    assert info is not None
    created = str(info.get("/CreationDate"))
    assert re.fullmatch(r"D:\d{14}Z?.*", created) and str(info.get("/ModDate")) == created
    assert "<xmp:CreateDate>" in xmp and "<xmp:ModifyDate>" in xmp, xmp


def _assert_clean(text: str) -> None:
    leaks = [text[max(0, m.start() - 60) : m.end() + 60] for m in LEAKS.finditer(text)]
    assert not leaks, leaks


@pytest.fixture
def demo_api():
    return client_for(make_key("demo-bank").value)


def test_demo_reports_are_pdf_a3b_clean_and_carry_the_triage_record(demo_api, caplog):
    call_command("seed_demo", stdout=io.StringIO())
    alert = next(
        a
        for a in demo_api.get("/v1/bias/amplification?status=open&limit=100").json()["data"]
        if a["severity"] == "medium"  # the recent month's open amplification alert (README, seed_demo)
    )
    r = demo_api.patch(
        f"/v1/bias/amplification/{alert['id']}",
        {"status": "resolved", "resolvedBy": "olivia.officer", "resolutionNotes": NOTE},
        format="json",
    )
    assert r.status_code == 200, r.content
    period = {"from": at(29)[:10], "to": at(0)[:10]}
    eu_job, eu = export_file(demo_api, template="eu_ai_act", format="pdf", time_period=period)
    tx_job, tx = export_file(demo_api, template="texas_traiga", format="pdf", time_period=period)
    assert eu_job["compliance_status"] in ("COMPLIANT", "NEEDS_REVIEW", "NON_COMPLIANT")
    assert tx_job["compliance_status"] is None
    for content in (eu, tx):
        _assert_pdf_a3b(content)
        text = _text(content)
        _assert_clean(text)
        assert NOTE in text and "olivia.officer" in text and alert["id"] in text
        assert re.search(r"\d+\.\d%", text) and not re.search(r"\b0\.\d{4,}\b", text), (
            "rates print as percentages"
        )
    assert not STATUSES.search(_text(tx)), "the Texas report names no status of its own"
    # WeasyPrint subsets fonts with HarfBuzz-Subset (libharfbuzz-subset0), not its fontTools fallback.
    assert not [r for r in caplog.records if "instead of HarfBuzz-Subset" in r.getMessage()]
    assert eu_job["compliance_status"] in _text(eu)
    # More decisions than the 200 printed: the whole log is embedded as an associated file, beside
    # the signed checkpoint and the verifier key.
    for content in (eu, tx):
        reader = PdfReader(io.BytesIO(content))
        specs = [spec.get_object() for spec in reader.trailer["/Root"]["/AF"]]
        assert {spec["/AFRelationship"] for spec in specs} == {"/Data"}
        assert {spec["/F"] for spec in specs} == {
            "decision-log.csv",
            "checkpoint-note.txt",
            "verifier-key.txt",
        }
        log = reader.attachments["decision-log.csv"][0].decode().splitlines()
        assert len(log) > 1 + 200 and log[0].startswith("decision_id,")


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_an_empty_period_prints_not_measured_with_its_reason(api, template):
    seed(api, 5)
    job, content = export_file(
        api, template=template, format="pdf", time_period={"from": "2025-01-01", "to": "2025-01-31"}
    )
    _assert_pdf_a3b(content)
    text = _text(content)
    _assert_clean(text)
    assert "not measured (" in text
    assert "No decision matches the period and filters" in text
    if template == "texas_traiga":
        assert job["compliance_status"] is None and not STATUSES.search(text)


def test_figures_print_with_separators_percentages_and_utc(api):
    seed(api, 30, overtrust=4)
    _, content = export_file(api, template="eu_ai_act", format="pdf")
    text = _text(content)
    _assert_clean(text)
    assert "Automation bias rate 13.3%" in text  # 4 of 30
    assert re.search(r"Generated at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", text)
    for heading in ("Appendix A. Decision log", "Appendix B. Glossary of measures",
                    "Appendix C. How to verify this report", "Appendix D. Attestation"):  # fmt: skip
        assert text.count(heading) == 2, heading  # in the contents and as the appendix's title
    for term in ("Trust score", "RAIR (relative AI reliance)", "Disparate impact ratio (four-fifths rule)",
                 "Amplification score", "Schemmer et al."):  # fmt: skip
        assert term in text, term


def test_the_pdf_states_the_sequence_range_its_chain_verification_covered(api):
    seed(api, 5)
    _, first = export_file(api, template="eu_ai_act", format="pdf")
    assert "Range covered: All entries, 1 to 5, were verified when this report was generated." in _text(first)
    seed(api, 3, start=100)
    _, second = export_file(api, template="texas_traiga", format="pdf")
    text = _text(second)
    assert re.search(
        r"Range covered: Entries 1 to 5 were verified by a check at .+ UTC, and entries 6 to 8 were "
        r"rechecked when this report was generated\.",
        text,
    ), text[text.find("Range covered") : text.find("Range covered") + 300]
