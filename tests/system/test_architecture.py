"""docs/architecture.md's mechanical claims checked against the code: the import-linter contracts
it lists, and the floors it names."""

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
