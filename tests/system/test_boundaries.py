"""The app boundaries in pyproject.toml ([tool.importlinter]) hold, and breaking one fails
`lint-imports` (run on a copy of the tree, so the probe never touches the checkout)."""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.test import override_settings

ROOT = Path(__file__).resolve().parents[2]
LINTER = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
PACKAGES = LINTER["root_packages"]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", "pyproject.toml", "--no-cache"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(
    "probe, broken",
    [
        ("bias/probe.py", "from audit.views import LogView"),
        ("webhooks/probe.py", "from fairness.serializers import AlertOutput"),
        ("calibration/probe.py", "from audit.models import Decision"),
        ("config/probe.py", "from keys import services"),
        ("keys/probe.py", "from config.health import health_snapshot"),
        ("audit/probe.py", "from bias.stats import lock_decision"),
        ("calibration/probe.py", "from audit.pipeline import items_write"),
        ("fairness/probe.py", "from console import overview"),
        ("console/probe.py", "from fairness.models import AmplificationAlert"),
        ("audit/probe.py", "from calibration import services"),
        ("audit/probe.py", "def later():\n    from bias import selectors"),
        ("bias/probe.py", "from calibration import selectors"),
        ("webhooks/probe.py", "from audit import selectors"),
    ],
)
def test_breaking_a_boundary_fails_lint_imports(tree: Path, probe: str, broken: str):
    assert _lint(tree).returncode == 0
    (tree / probe).write_text(broken + "\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout and probe.removesuffix(".py").replace("/", ".") in result.stdout


def _project_apps() -> set[str]:
    """The installed apps whose code is in this repository (not Django's, not a library's: those
    live in the virtualenv, which a fresh checkout keeps inside the repository, at .venv)."""
    venv = Path(sys.prefix).resolve()
    return {
        c.name
        for c in apps.get_app_configs()
        if Path(c.path).resolve().is_relative_to(ROOT) and not Path(c.path).resolve().is_relative_to(venv)
    }


def _contract_gaps(linter: dict) -> dict[str, set[str]]:
    """Every project app must be a root package, on a floor of the layers contract and (except
    `config`, the ground floor every app may use, and `console`, the top floor no app may import)
    reached by other apps only through its public modules (a `protected` contract of its own)."""
    contracts = linter["contracts"]
    floors = {
        name.strip()
        for c in contracts
        if c["type"] == "layers"
        for layer in c["layers"]
        for name in layer.split("|")
    }
    protected = {
        module.removesuffix(".*")
        for c in contracts
        if c["type"] == "protected"
        for module in c["protected_modules"]
    }
    project = _project_apps()
    return {
        "root_packages": project - set(linter["root_packages"]),
        "floors": project - floors,
        "protected": project - protected - {"config", "console"},
    }


def test_every_app_is_on_a_floor_and_behind_its_public_modules():
    assert "oversight" in _project_apps() and "console" in _project_apps()
    assert _contract_gaps(LINTER) == {"root_packages": set(), "floors": set(), "protected": set()}


def test_an_app_left_out_of_the_contracts_fails_the_check():
    with override_settings(INSTALLED_APPS=[*settings.INSTALLED_APPS, "tests.system.layerless_app"]):
        gaps = _contract_gaps(LINTER)
    assert gaps == {name: {"tests.system.layerless_app"} for name in ("root_packages", "floors", "protected")}
