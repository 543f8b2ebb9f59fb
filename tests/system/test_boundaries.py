"""The app boundaries in pyproject.toml ([tool.importlinter]) hold, and breaking one fails
`lint-imports` (run on a copy of the tree, so the probe never touches the checkout)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    "config",
    "audit",
    "bias",
    "calibration",
    "compliance",
    "console",
    "fairness",
    "keys",
    "oversight",
    "webhooks",
]
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
