"""No file of the repository holds a merge's conflict markers: a conflict resolved by committing
both sides reads as two contradicting texts, and fails here instead."""

import re

from tests.processes import ROOT
from tests.system.test_reference_citations import _sources

# The opening and closing markers (`=======` alone could be a Markdown heading's underline).
MARKER = re.compile(r"^(<{7}|>{7}) ", re.MULTILINE)


def _markers(text: str) -> list[int]:
    return [text.count("\n", 0, match.start()) + 1 for match in MARKER.finditer(text)]


def test_no_file_holds_conflict_markers():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _sources()
        for line in _markers(path.read_text("utf-8", "replace"))
    ]
    assert found == []


def test_a_conflict_is_seen_and_a_heading_is_not():
    assert _markers("text\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n") == [2, 6]
    assert _markers("Heading\n=======\n\n> a quote\n>> nested\n") == []
