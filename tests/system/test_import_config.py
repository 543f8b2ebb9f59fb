"""`import config` starts nothing (config/__init__.py): no Celery, no Django, so a module of the
ground floor that needs neither can be imported without them."""

import subprocess
import sys

from tests.processes import ROOT


def test_importing_the_config_package_starts_neither_celery_nor_django():
    code = "import sys, config; print(sorted({'celery', 'django'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
