"""`make test` runs `pytest -n 2 --dist loadgroup`: the tests of one `xdist_group` (the
multi-process tests, a module that seeds the demo once) must run on one worker, one after the
other. A pytest of two workers on a generated module, with the suite's own hook, shows where each
grouped test ran."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MODULE = textwrap.dedent(
    """
    import os
    import pytest

    def _record(tmp_name):
        with open(os.environ["GROUP_LOG"], "a") as log:
            log.write(f"{tmp_name} {os.environ['PYTEST_XDIST_WORKER']}\\n")

    @pytest.mark.xdist_group("together")
    @pytest.mark.parametrize("n", range(6))
    def test_grouped(n):
        _record(f"grouped-{n}")

    @pytest.mark.parametrize("n", range(6))
    def test_free(n):
        _record(f"free-{n}")
    """
)
CONFTEST = textwrap.dedent(
    """
    import pytest
    from tests.xdist_groups import apply_xdist_groups

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(config, items):
        if config.getoption("--with-hook"):
            apply_xdist_groups(items)

    def pytest_addoption(parser):
        parser.addoption("--with-hook", action="store_true")
    """
)


def _workers_of_the_group(tmp_path: Path, *flags: str) -> set[str]:
    (tmp_path / "test_generated.py").write_text(MODULE)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    log = tmp_path / "where.log"
    log.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env |= {"GROUP_LOG": str(log), "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
         "-p", "no:django", "-p", "no:randomly", *flags, str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [line.split() for line in log.read_text().splitlines()]
    assert len(lines) == 12
    return {worker for name, worker in lines if name.startswith("grouped-")}


def test_a_group_runs_on_one_worker(tmp_path):
    """Without the hook (no `--with-hook`) pytest-xdist 3.8 under pytest 9 puts this group's
    first two tests on one worker and the next two on the other."""
    assert len(_workers_of_the_group(tmp_path, "--with-hook")) == 1
