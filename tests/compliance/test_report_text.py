"""What the demo's four reports (both templates, both months) say, rule by rule
(docs/reference/reports.md, "How figures are printed"): no code where words are due (`not_checked`),
no line on the trust chart that no rule defines, the confidence check in both templates with its
own labels and the reason it was not run, each reason of an absent figure said once per column,
a threshold beside every figure of the recommendations' threshold column, the previous period's
figures printed beside this period's, and the model version the period's decisions name."""

import base64
import html as htmllib
import re

import pytest

from compliance import charts
from tests.compliance.conftest import DOCUMENTS

pytestmark = [pytest.mark.django_db, pytest.mark.layout, pytest.mark.xdist_group("demo_documents")]


def _text(html: str) -> str:
    return htmllib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def _table(html: str, title: str) -> list[list[str]]:
    """The body rows of the table under the heading `title`, as cell texts."""
    start = html.index(f"<h4>{title}</h4>")
    body = html[html.index("<tbody>", start) : html.index("</tbody>", start)]
    return [
        [_text(cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def _charts(html: str) -> list[str]:
    return [
        base64.b64decode(uri).decode()
        for uri in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", html)
    ]


def test_the_trust_chart_draws_no_line_that_no_rule_defines():
    trend = {
        "interval": "day",
        "points": [
            {"period_start": f"2026-10-{d:02d}", "decisions": 5, "trust_score": 0.5} for d in range(1, 6)
        ],
        "trend": {"direction": "stable"},
    }
    svg = charts.trust_trend(trend)
    assert "trust score" in svg and "threshold" not in svg


@pytest.mark.parametrize("document", DOCUMENTS)
def test_codes_are_words_and_the_confidence_check_has_its_own_labels(demo_documents, document):
    html, _ = demo_documents[document]
    text = _text(html)
    assert "not_checked" not in text
    assert "risk threshold" not in text and all("risk threshold" not in svg for svg in _charts(html))
    # The confidence check prints in both templates, its slope the calibration slope, not a trend's.
    assert ">Confidence check</h" in html
    start = text.index("Confidence check Decisions with an AI confidence and an outcome")
    check = text[start : start + 900]
    assert "Calibration slope b (1 when calibrated)" in check and "Slope per period" not in check
    if "Verdict not checked" in check:
        assert re.search(
            r"Verdict not checked: [\d,]+ decision\(s\) carry both an AI confidence and an outcome", check
        )
        assert "no data for it in the period" not in check
    # An organisation's AI accuracy never reads as a band's.
    assert "no outcome is known in this band" not in text


@pytest.mark.parametrize("document", DOCUMENTS)
def test_each_reason_of_an_absent_figure_is_said_once_per_column(demo_documents, document):
    html, _ = demo_documents[document]
    for title in ("Per reviewer (lowest catch rate first)", "Quick agreement per reviewer (flagged first)"):
        rows = _table(html, title)
        assert rows
        assert not [cell for row in rows for cell in row if cell.startswith("not measured (")], title
    text = _text(html)
    if "no known_right probe" in text:  # some reviewer's d' is absent (the older month probes them all)
        assert "d' not measured where shown: no known_right probe" in text
        assert text.count("no known_right probe") == 1 + text.count(
            "(no known_right probe)"
        )  # the team row may name it


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_figure_of_the_threshold_column_has_its_threshold(demo_documents, document):
    html, _ = demo_documents[document]
    rows = _table(html.replace("<h4>Recommendations, most urgent first</h4>", "<h4>R</h4>"), "R")
    assert len(rows) >= 3
    bare = [row for row in rows if not re.search(r"\(.*threshold.*\)$", row[2])]
    assert not bare, bare


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_previous_period_prints_both_values_and_the_version_is_the_decisions(demo_documents, document):
    html, _ = demo_documents[document]
    text = _text(html)
    if document.endswith("recent"):
        sentence = text[text.index("In the previous period of the same length") :][:700]
        for name in ("automation-bias rate", "override rate", "over-trust rate"):
            assert re.search(rf"{name} \d+\.\d% then and \d+\.\d% now \([+-]\d+\.\d pp\)", sentence), (
                name,
                sentence,
            )
        assert re.search(r"trust score \d\.\d\d then and \d\.\d\d now \([+-]\d\.\d\d\)", sentence), sentence
    version = "2.3" if document.endswith("recent") else "2.2"
    assert f"Version in the period's decisions {version} (all 1,650 decisions of the period)" in text
    assert "Version in the profile 2.3" in text
