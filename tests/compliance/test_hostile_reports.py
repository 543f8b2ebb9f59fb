"""Reports a hostile customer tries to poison (docs/reference/limits.md, "CSV cells" and
"Chart labels"): formula-looking cells come out of every CSV as text, and any subgroup value
draws as itself in the charts."""

import csv
import io

import pytest
from pypdf import PdfReader

from tests.compliance.helpers import decision, export_file

pytestmark = pytest.mark.django_db

HOSTILE = ['=HYPERLINK("http://x")', "+1+2", "-3+4", "@SUM(A1)", "\tcmd", "\rcmd"]


def _hostile_items(count: int) -> list[dict]:
    return [
        decision(i, context=HOSTILE[i % len(HOSTILE)], model_version=HOSTILE[i % len(HOSTILE)][:20])
        for i in range(count)
    ]


def _rows(text: str) -> dict[str, dict[str, str]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    return {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}


def _log(api, items) -> None:
    for offset in range(0, len(items), 1000):
        r = api.post("/v1/log/batch", {"decisions": items[offset : offset + 1000]}, format="json")
        assert r.status_code == 200 and r.json()["rejected"] == 0, r.content


def test_formula_cells_are_written_with_a_leading_quote_in_the_csv(api):
    items = [*_hostile_items(12), decision(100, context="a = b, plain"), decision(101, context="'quoted")]
    _log(api, items)
    _, content = export_file(api, template="eu_ai_act", format="csv")
    rows = _rows(content.decode())
    for item in items:
        row = rows[item["decision_id"]]
        expected = item["context"]
        if expected[:1] in ("=", "+", "-", "@", "\t", "\r"):
            expected = "'" + expected
        assert row["context"] == expected, (item["context"], row["context"])
        version = item["model_version"]
        assert row["model_version"] == ("'" + version if version[:1] in "=+-@\t\r" else version)
    assert float(rows[items[0]["decision_id"]]["ai_confidence"]) == items[0]["ai_confidence"]


def test_formula_cells_are_escaped_in_the_csv_attached_to_a_pdf(api):
    items = _hostile_items(501)
    _log(api, items)
    _, content = export_file(api, template="eu_ai_act", format="pdf")
    attached = PdfReader(io.BytesIO(content)).attachments["decision-log.csv"][0].decode()
    rows = _rows(attached)
    assert len(rows) == 501
    for row in rows.values():
        assert row["context"].startswith("'") and row["context"][1:] in HOSTILE


def test_a_subgroup_value_with_dollar_signs_draws_as_text_and_the_pdf_completes(api):
    values = ["$\\bad{$", "$x^2$", "\\frac{1}{0}", "a$b", "_{}^$"]
    items = [
        decision(i, subgroups={"gender": values[i % len(values)], "custom": {"$\\x{": "$"}})
        for i in range(30)
    ]
    _log(api, items)
    job, content = export_file(api, template="eu_ai_act", format="pdf")
    assert job["status"] == "completed"
    reader = PdfReader(io.BytesIO(content))
    assert len(reader.pages) >= 3


def test_a_chart_label_with_dollar_signs_is_drawn_not_parsed():
    from compliance import charts

    svg = charts.subgroups(
        {"gender": {"groups": [{"group": "$\\bad{$", "ai_favorable_rate": 0.5, "favorable_rate": 0.4}]}}
    )
    assert svg is not None and "<svg" in svg
