"""`python3 -m audit.offline_verify --report REPORT.json EXPORT.ndjson` (audit/offline_report.py): a json EU
AI Act report's calibration figures re-derived from the audit-trail export alone."""

import io
import json
import re

import pytest

from audit import offline_verify
from tests.compliance.helpers import export_file, seed

pytestmark = pytest.mark.django_db


def files(api, tmp_path, **body):
    _, content = export_file(api, template="eu_ai_act", format="json", **body)
    report = tmp_path / "report.json"
    report.write_bytes(content)
    export = tmp_path / "export.ndjson"
    export.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    return report, export


def check(*paths) -> tuple[int, str]:
    out = io.StringIO()
    status = offline_verify.main(["--report", *map(str, paths)], out)
    return status, out.getvalue()


def test_every_figure_of_the_report_is_re_derived_from_the_export(api, tmp_path):
    seed(api, 300, overtrust=40)
    seed(api, 20, start=300, ai_confidence=None, outcome=None)  # unscored
    api.post("/v1/log", {"decision_id": "dec-301", "outcome": "approve"}, format="json")  # a late outcome
    report, export = files(api, tmp_path)
    status, text = check(report, export)
    assert status == 0, text
    assert "MISMATCH" not in text
    assert "executive_summary.trust_score" in text and "trust_calibration_analysis.overtrust_rate_ci" in text
    assert "compliance_status" in text and "its calibration inputs are checked above" in text
    assert re.fullmatch(r"all \d+ figures match", text.strip().splitlines()[-1])
    assert ".users[ana].category" in text  # every reviewer's figures and category


def test_a_filtered_report_is_re_derived_with_its_filters(api, tmp_path):
    seed(api, 150, overtrust=30)
    report, export = files(api, tmp_path, filters={"user_ids": ["ana", "ben"], "model_ids": ["loan-v1"]})
    status, text = check(report, export)
    assert status == 0, text


def test_a_changed_figure_is_a_mismatch(api, tmp_path):
    seed(api, 150, overtrust=30)
    report, export = files(api, tmp_path)
    data = json.loads(report.read_text())
    data["sections"]["executive_summary"]["trust_score"] += 0.01
    report.write_text(json.dumps(data))
    status, text = check(report, export)
    assert status == 1
    assert (
        next(line.split()[0] for line in text.splitlines() if "MISMATCH" in line)
        == "executive_summary.trust_score"
    )
    assert text.strip().splitlines()[-1] == "1 figures differ: executive_summary.trust_score"


def test_unreadable_inputs_exit_2(tmp_path):
    (tmp_path / "r.json").write_text("{}")
    (tmp_path / "e.ndjson").write_text("not json\n")
    assert check(tmp_path / "r.json", tmp_path / "e.ndjson")[0] == 2
    assert check(tmp_path / "missing.json", tmp_path / "e.ndjson")[0] == 2


def test_the_initial_decision_figures_are_re_derived_where_the_entries_hash_them(api, tmp_path):
    # docs/reference/decisions.md, "What the hash covers": RAIR, RSR and the switch rate rest on
    # the initial decision, which every entry appended now holds in its canonical text.
    seed(api, 120, overtrust=30, initial_decision="deny")
    report, export = files(api, tmp_path)
    status, text = check(report, export)
    assert status == 0, text
    rair = next(line for line in text.splitlines() if line.startswith("trust_calibration_analysis.rair "))
    assert rair.split()[-1] == "match" and "null" not in rair
    # The same export as entries written before the key was hashed: those figures rest on the
    # service's rows alone, and say so.
    lines = []
    for line in export.read_text().splitlines():
        doc = json.loads(line)
        doc.pop("initial_decision", None)
        lines.append(json.dumps(doc))
    export.write_text("\n".join(lines) + "\n")
    status, text = check(report, export)
    rair = next(line for line in text.splitlines() if line.startswith("trust_calibration_analysis.rair "))
    assert rair.endswith("not recomputable") and status == 0, text
