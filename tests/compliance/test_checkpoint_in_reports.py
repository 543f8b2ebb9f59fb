"""Both report templates carry the signed checkpoint at the head they cite (signed by the report
when the chain grew since the last one), with the verifier key (docs/reference/checkpoints.md, "Reports"); the PDF prints
the note and the key."""

import io
import json

import pytest
from pypdf import PdfReader

from tests.compliance.helpers import export_file, seed

pytestmark = pytest.mark.django_db

WHERE = {"eu_ai_act": "audit_trail", "texas_traiga": "monitoring_and_safeguards"}


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_the_report_data_holds_the_checkpoint_at_its_head_and_the_verifier_key(api, template):
    seed(api, 4)
    made = api.post("/v1/audit-trail/checkpoints").json()  # at the head: the report signs no other
    _, content = export_file(api, template=template, format="json")
    checkpoint = json.loads(content)["sections"][WHERE[template]]["checkpoint"]
    key = api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"]
    assert checkpoint == {
        "checkpoint_id": made["checkpoint_id"],
        "sequence": 4,
        "root_hash": made["root_hash"],
        "head_hash": made["head_hash"],
        "created_at": made["created_at"],
        "note": made["note"],
        "verifier_key": key,
    }


def test_an_empty_chain_has_no_checkpoint_the_members_are_null_and_the_key_is_given(api):
    _, content = export_file(api, template="eu_ai_act", format="json")
    checkpoint = json.loads(content)["sections"]["audit_trail"]["checkpoint"]
    assert checkpoint["note"] is None and checkpoint["sequence"] is None
    assert checkpoint["verifier_key"].startswith("trustcal.local+")


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_the_pdf_prints_the_note_and_the_key_with_how_to_check_them(api, template):
    seed(api, 5)
    made = api.post("/v1/audit-trail/checkpoints").json()
    _, content = export_file(api, template=template, format="pdf")
    text = "".join("".join(page.extract_text().split()) for page in PdfReader(io.BytesIO(content)).pages)
    key = api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"]
    for line in made["note"].splitlines():
        assert "".join(line.split()) in text, line
    assert key in text
    assert "python3-maudit.offline_verify" in text
