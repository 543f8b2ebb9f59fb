"""Citations of the behaviour reference stay valid: wherever the code, the tests or the docs cite
"docs/reference/<file>.md, <heading>", that file exists and has a heading the citation begins
with (docs/reference/README.md says how to cite). A renamed heading or a moved file fails here
instead of leaving a reader with a dead reference."""

import os
import re
from pathlib import Path

from tests.processes import ROOT

REFERENCE = ROOT / "docs" / "reference"
SUFFIXES = {".py", ".md", ".html", ".toml", ".txt"}
SKIPPED_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
# A file, then optionally ", " and the cited heading; a citation may wrap over lines of a
# docstring or a `#` comment, so lines are joined first.
CITATION = re.compile(r"docs/reference/([A-Za-z0-9_-]+)\.md(?:(?=,[ \t]*\"?([^\n]{0,160})))?")
# What may follow the comma without being a heading: the next citation of a list, or the
# placeholder of the reference's own "how to cite" line.
NOT_A_HEADING = ("docs/reference/", "<heading>")


def _sources() -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        out.extend(Path(folder) / name for name in files if Path(name).suffix in SUFFIXES)
    return out


def _headings(path: Path) -> list[str]:
    found, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.append(line.lstrip("#").strip())
    return found


def _planned() -> set[str]:
    """Files the index lists; a citation of one that has not been written yet is allowed."""
    index = (REFERENCE / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"\(([A-Za-z0-9_-]+)\.md\)", index))


def test_every_citation_names_an_existing_file_and_heading():
    planned = _planned()
    headings = {path.stem: _headings(path) for path in REFERENCE.glob("*.md")}
    dead = []
    for path in _sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        joined = re.sub(r"[ \t]*\n[ \t]*(?:#+[ \t]*)?", " ", text)
        for match in CITATION.finditer(joined):
            name, rest = match.group(1), match.group(2)
            where = path.relative_to(ROOT)
            if name not in headings:
                if name not in planned:
                    dead.append(f"{where}: docs/reference/{name}.md does not exist")
                continue
            if rest is None or rest.startswith(NOT_A_HEADING):
                continue
            if not any(rest.startswith(heading) for heading in headings[name]):
                dead.append(f"{where}: docs/reference/{name}.md has no heading that begins {rest[:50]!r}")
    assert not dead, (
        "Dead citations of the reference (cite as 'docs/reference/<file>.md, <heading>', with the "
        "heading's exact words, or without ', ' after the file name):\n" + "\n".join(dead)
    )


def test_the_index_lists_every_reference_file():
    planned = _planned()
    missing = sorted(path.name for path in REFERENCE.glob("*.md") if path.stem not in planned | {"README"})
    assert not missing, f"docs/reference/README.md does not list: {missing}"
