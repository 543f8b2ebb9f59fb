"""docs/architecture.md's mechanical claims checked against the code: the import-linter contracts
it lists, the floors it names, the line limit of a module and the complexity check CI runs."""

import os
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_contract_list_is_pyprojects():
    listed = re.search(r"<!-- contracts -->\n(.*?)<!-- /contracts -->", ARCHITECTURE, re.S)
    assert listed, "docs/architecture.md lists the contracts between <!-- contracts --> markers"
    names = [line.strip().removeprefix("- ") for line in listed.group(1).splitlines() if line.strip()]
    assert names == [c["name"] for c in CONTRACTS]


def test_the_floors_named_are_the_layers_contract():
    (layers,) = [c["layers"] for c in CONTRACTS if c["type"] == "layers"]
    paragraph = re.search(
        r"The floors are an import-linter `layers` contract in `pyproject.toml`[^:]*:(.*?)\.\s",
        ARCHITECTURE,
        re.S,
    )
    assert paragraph
    assert re.findall(r"`([^`]+)`", paragraph.group(1)) == layers


LINE_LIMIT = 400


def _service_modules() -> dict[str, int]:
    """Line counts of the service's own Python modules: not migrations, tests, bench, nor the
    virtualenv or anything else hidden (never descended into)."""
    counts = {}
    for folder, dirs, files in os.walk(ROOT):
        here = Path(folder).relative_to(ROOT)
        skip = {"tests", "bench", "var", "node_modules"} if here == Path() else set()
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "migrations" and d not in skip]
        for name in files:
            if name.endswith(".py"):
                counts[(here / name).as_posix()] = len((ROOT / here / name).read_text().splitlines())
    return counts


def test_no_module_is_over_the_line_limit_but_those_named_as_being_split():
    claim = re.search(
        r"is over (\d+) lines, except those still being\s+split: <!-- over-limit -->(.*?)<!--", ARCHITECTURE
    )
    assert claim, "docs/architecture.md states the line limit and lists the modules over it"
    assert int(claim.group(1)) == LINE_LIMIT
    named = set(re.findall(r"`([^`]+)`", claim.group(2)))
    counts = _service_modules()
    assert "audit/pipeline.py" in counts and "config/api.py" in counts
    over = {name for name, lines in counts.items() if lines > LINE_LIMIT}
    assert over == named, (
        f"modules over {LINE_LIMIT} lines: {sorted(over)}; docs/architecture.md names {sorted(named)} "
        "(split a module that grew, and take one that was split off the list)"
    )


def _xenon_commands(text: str) -> list[str]:
    return [
        re.sub(r"^.*?xenon ", "xenon ", line.strip())
        for line in text.splitlines()
        if "xenon " in line and not line.lstrip().startswith("#")
    ]


def test_ci_and_make_lint_run_the_complexity_check_the_architecture_names():
    named = re.findall(r"`(xenon [^`]+)`", ARCHITECTURE)
    ci = _xenon_commands((ROOT / ".ci" / "run").read_text())
    make = _xenon_commands((ROOT / "Makefile").read_text())
    assert len(named) == 1 and ci == named and make == named
    ignored = re.search(r"--ignore (\S+)", named[0])
    assert ignored and {"tests", "bench", "migrations"} <= set(ignored.group(1).split(","))
