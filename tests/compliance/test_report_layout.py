"""The PDF reports laid out as WeasyPrint lays them out for the PDF, on the demo organisation (both
templates, both months): every line stays inside its column, no heading is the last thing on a
page, a unit never starts a line, no short table is split and no table cell cuts a word or an
identifier, what the reader sees names no internal state, and every legal citation is one of
compliance/citations.py, of the report's own law (docs/reference/reports.md)."""

import re
from collections.abc import Iterator
from typing import Any

import pytest
from weasyprint.formatting_structure import boxes

from compliance.citations import CITATIONS, TEMPLATE_LAWS
from compliance.pdf_blocks import recommendation_rows
from tests.compliance.conftest import DOCUMENTS

pytestmark = [pytest.mark.django_db, pytest.mark.layout, pytest.mark.xdist_group("demo_documents")]

HEADINGS = {"h1", "h2", "h3", "h4", "dt"}
SLACK = 0.5  # CSS px: rounding of glyph advances


def _lines(box: Any, block: Any = None) -> Iterator[tuple[Any, Any]]:
    """Each line box with the block whose content box it must stay inside."""
    if isinstance(box, boxes.LineBox):
        yield box, block
        return
    if isinstance(box, boxes.BlockContainerBox):
        block = box
    for child in getattr(box, "children", ()):
        yield from _lines(child, block)


def _texts(box: Any) -> Iterator[Any]:
    if isinstance(box, boxes.TextBox):
        yield box
    for child in getattr(box, "children", ()):
        yield from _texts(child)


def _flow(page: Any) -> list[Any]:
    """The page's content, margin boxes (running header and footer) left out."""
    return [c for c in page._page_box.children if not isinstance(c, boxes.MarginBox)]


def _last_line_tag(page: Any) -> str:
    tag = ""
    for root in _flow(page):
        for line, block in _lines(root):
            if any(t.text.strip() for t in _texts(line)):
                tag = block.element_tag if block is not None else ""
    return tag


@pytest.mark.parametrize("document", DOCUMENTS)
def test_no_line_is_wider_than_its_column(demo_documents, document):
    _, rendered = demo_documents[document]
    wide = []
    for number, page in enumerate(rendered.pages, 1):
        for root in _flow(page):
            for line, block in _lines(root):
                right = block.content_box_x() + block.width
                for text in _texts(line):
                    if text.position_x + text.width > right + SLACK:
                        wide.append((number, text.text[:60], round(text.position_x + text.width - right, 1)))
    assert not wide, wide


@pytest.mark.parametrize("document", DOCUMENTS)
def test_no_heading_is_the_last_line_of_a_page_and_no_unit_starts_a_line(demo_documents, document):
    _, rendered = demo_documents[document]
    pages = rendered.pages
    assert len(pages) > 10
    orphaned = [n for n, page in enumerate(pages[:-1], 1) if _last_line_tag(page) in HEADINGS]
    assert not orphaned, f"a heading ends pages {orphaned}"
    units = []
    for number, page in enumerate(pages, 1):
        for root in _flow(page):
            for line, _ in _lines(root):
                first = next((t.text.lstrip() for t in _texts(line) if t.text.strip()), "")
                if first.startswith(("%", "pp ")) or first == "pp":
                    units.append((number, first[:40]))
    assert not units, units


def _tables(box: Any) -> Iterator[Any]:
    if isinstance(box, boxes.TableBox):
        yield box
    for child in getattr(box, "children", ()):
        yield from _tables(child)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_no_short_table_is_split_across_pages(demo_documents, document):
    """A table of 12 rows or fewer is printed whole on one page (a longer one may run on, its
    header repeated)."""
    _, rendered = demo_documents[document]
    pages_of: dict[Any, list[int]] = {}
    for number, page in enumerate(rendered.pages, 1):
        for root in _flow(page):
            for table in _tables(root):
                if len(table.element.findall(".//tbody/tr")) <= 12:
                    pages_of.setdefault(table.element, []).append(number)
    assert pages_of  # the demo's reports hold short tables
    split = [
        (pages, table.get("class"), "".join(table.itertext())[:80])
        for table, pages in pages_of.items()
        if len(pages) > 1
    ]
    assert not split, split


@pytest.mark.parametrize("document", DOCUMENTS)
def test_a_table_that_runs_on_carries_at_least_four_rows_onto_each_page(demo_documents, document):
    """No page holds a lone row or two of a long table (the decision log's last rows, say)."""
    _, rendered = demo_documents[document]
    rows_on: dict[Any, list[int]] = {}
    for page in rendered.pages:
        for root in _flow(page):
            for table in _tables(root):
                rows = sum(
                    len(group.children)
                    for group in table.children
                    if isinstance(group, boxes.TableRowGroupBox) and not group.is_header
                )
                rows_on.setdefault(table.element, []).append(rows)
    runs_on = {table: counts for table, counts in rows_on.items() if len(counts) > 1}
    assert runs_on  # the decision log runs over several pages
    short = [("".join(t.itertext())[:40], counts) for t, counts in runs_on.items() if min(counts) < 4]
    assert not short, short


# Where a line may end inside a table cell: at a space, or after the hyphen of a hyphenated word
# ("over-reliance"). An identifier (INSUFFICIENT_DATA, an alert id, officer-31, a date) is never
# broken, not even after its underscore or hyphen.
HYPHENATED = re.compile(r"[a-z]-[a-z]$")


@pytest.mark.parametrize("document", DOCUMENTS)
def test_no_table_cell_breaks_a_word_or_an_identifier(demo_documents, document):
    """No line of a table cell ends inside a word or an identifier (docs/reference/reports.md: no
    word or identifier is broken inside)."""
    _, rendered = demo_documents[document]
    cut = []
    cells = 0
    for number, page in enumerate(rendered.pages, 1):
        lines_of: dict[Any, list[str]] = {}
        for root in _flow(page):
            for line, block in _lines(root):
                if block is not None and block.element_tag == "td":
                    lines_of.setdefault(block, []).append("".join(t.text for t in _texts(line)))
        for block, lines in lines_of.items():
            cells += 1
            full = "".join(block.element.itertext())
            assert "\u200b" not in full, full
            pos = 0
            for text in lines[:-1]:
                text = text.strip()
                start = full.find(text, pos)
                if start < 0:
                    break
                pos = start + len(text)
                if full[pos : pos + 1] != " " and not HYPHENATED.search(full[max(0, pos - 2) : pos + 1]):
                    cut.append((number, full[:40], text))
    assert cells > 100
    assert not cut, cut


def _text_blocks(page: Any) -> list[Any]:
    """The blocks that hold the page's lines of text, each once, in order."""
    found: list[Any] = []
    for root in _flow(page):
        for line, block in _lines(root):
            if any(t.text.strip() for t in _texts(line)) and block not in found:
                found.append(block)
    return found


@pytest.mark.parametrize("document", DOCUMENTS)
def test_no_page_holds_a_lone_paragraph(demo_documents, document):
    """A closing note (under a table, the pointer to the decision log, under vigilance) keeps
    company on its page rather than fill one alone."""
    _, rendered = demo_documents[document]
    lone = []
    for number, page in enumerate(rendered.pages, 1):
        held = _text_blocks(page)
        if len(held) == 1 and held[0].element_tag == "p":
            lone.append((number, " ".join(t.text for t in _texts(held[0]))[:60]))
    assert not lone, lone


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_report_prints_no_internal_state_and_no_doubled_heading(demo_documents, document):
    html, _ = demo_documents[document]
    for internal in ("Verified through sequence", "Rechecked from sequence", "Earlier check at"):
        assert internal not in html, internal
    assert "Range verified" in html
    for heading in ("Review effort: did the reviewer look?", "Signed checkpoint of the audit trail"):
        assert html.count(f">{heading}</h3>") == 1, heading
    assert ">Review effort</h3>" not in html and ">Latest signed checkpoint</h3>" not in html
    assert re.search(r"Entries covered</td><td>1 to \d{1,3},\d{3}</td>", html), "a sequence with separators"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_contents_list_every_section_and_the_summary_names_review_effort_and_vigilance(
    demo_documents, document
):
    html, rendered = demo_documents[document]
    contents = html[html.index('<nav class="toc">') : html.index("</nav>")]
    for anchor in re.findall(r'<(?:section|h3) class="[^"]*" id="([^"]+)"|<h3 id="([^"]+)"', html):
        target = anchor[0] or anchor[1]
        assert f'href="#{target}"' in contents, target
    assert contents.count("<li>") >= 13
    summary = _printed(rendered)
    assert "Review effort: " in summary and "Vigilance: reviewers caught " in summary


# An article or section reference as printed: "Art. 14(4)(b)", "Article 14", "§552.056", or a bare
# "14(4)(a)" in a table of points.
REFERENCE = re.compile(
    r"(?:Art\.|Article)\s\d+(?:\(\d+\))*(?:\([a-z]\))?|§\s?\d+\.\d+(?:\([a-z]\))?|\b\d+\(\d+\)(?:\([a-z]\))?"
)
BORROWED = re.compile(r"under the EU AI Act", re.IGNORECASE)


def _printed(document: Any) -> str:
    return "\n".join(" ".join(t.text for t in _texts(page._page_box)) for page in document.pages)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_citation_printed_is_in_the_table_and_of_the_reports_own_law(demo_documents, document):
    _, rendered = demo_documents[document]
    text = _printed(rendered)
    own = {c.text for c in CITATIONS.values() if c.law in TEMPLATE_LAWS[document.split("-")[0]]}
    every = {c.text for c in CITATIONS.values()}
    unknown, foreign = [], []
    for match in REFERENCE.finditer(text):
        cited = match.group().replace("§ ", "§")
        context = text[max(0, match.start() - 80) : match.end() + 20]
        if not any(c == cited or c.endswith(" " + cited) for c in every):
            unknown.append(context)
        elif not any(c == cited or c.endswith(" " + cited) for c in own) and not BORROWED.search(context):
            foreign.append(context)
    assert not unknown, unknown
    assert not foreign, foreign
    if document.startswith("texas_traiga"):
        assert "§552.056" in text and "Art." not in text
    else:
        assert "Art. 14(4)(b)" in text and "Art. 14(4)(d)" in text and "Art. 14(4)(a) and (b)" not in text


@pytest.mark.parametrize("template", ["texas_traiga", "eu_ai_act"])
def test_a_borrowed_over_trust_limit_says_whose_it_is(template):
    """The Texas report's recommendation on the over-trust rate borrows the EU AI Act report's
    limit and says so; the EU AI Act report's own says plain "threshold"."""
    rec = {
        "figure": "organization.overtrust_rate",
        "value": 0.62,
        "threshold": 0.5,
        "priority": "high",
        "text": "t",
    }
    (row,) = recommendation_rows([rec], template)["rows"]
    assert ("the EU AI Act report's threshold" in row[2]) is (template == "texas_traiga"), row
    assert "threshold" in row[2]
