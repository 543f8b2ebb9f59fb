"""docs/architecture.md names the file and line where a batch's decisions reach the database, each
with the code found there (`path:line` (`code`)); a change that moves the line fails here until
the doc follows."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACE = re.compile(r"`([\w/]+\.py):(\d+)`\s+\(`([^`]+)`")


def test_every_file_and_line_the_architecture_names_holds_the_code_it_names():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    places = PLACE.findall(doc)
    assert len(places) >= 4  # the batch's decisions, their COPY, a small write's, SQLite's
    for path, line, code in places:
        lines = (ROOT / path).read_text().splitlines()
        assert code in lines[int(line) - 1], f"{path}:{line} does not hold {code!r}"
