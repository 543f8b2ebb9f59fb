"""Configuration is read in one place and documented in one place: every environment variable
comes from config/settings (no module elsewhere reads the environment), and the README's
environment table lists exactly those variables."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("audit", "bias", "calibration", "compliance", "config", "console", "fairness", "keys", "webhooks")
# Reading the environment outside the settings: only to choose the settings module, or to hand
# the whole environment to a child process.
ALLOWED = re.compile(r'os\.environ\.setdefault\("DJANGO_SETTINGS_MODULE"|env = dict\(os\.environ\)')
READS = re.compile(r"os\.environ|os\.getenv|environ\.Env\(")


def settings_variables() -> set[str]:
    names: set[str] = set()
    for module in (ROOT / "config" / "settings").glob("*.py"):
        names |= set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z][A-Z0-9_]+)"', module.read_text()))
    return names


def readme_variables() -> set[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("\n## Environment") + 1 :]
    section = section[: section.index("\n## ")]
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)`", section, re.MULTILINE))


def test_no_module_outside_the_settings_reads_the_environment():
    readers = []
    for app in APPS:
        for module in (ROOT / app).rglob("*.py"):
            if "settings" in module.relative_to(ROOT).parts or "migrations" in module.parts:
                continue
            for number, line in enumerate(module.read_text().splitlines(), 1):
                if READS.search(line) and not ALLOWED.search(line):
                    readers.append(f"{module.relative_to(ROOT)}:{number}: {line.strip()}")
    assert readers == []


def test_the_readme_environment_table_lists_exactly_the_settings_variables():
    # DJANGO_SETTINGS_MODULE is read by Django itself, to find the settings module.
    assert readme_variables() - {"DJANGO_SETTINGS_MODULE"} == settings_variables()
