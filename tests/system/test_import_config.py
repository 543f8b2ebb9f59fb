"""`import config` starts nothing (config/__init__.py): no Celery, no Django, so a module of the
ground floor that needs neither can be imported without them."""

import os
import subprocess
import sys

from tests.processes import ROOT


def test_importing_the_config_package_starts_neither_celery_nor_django():
    code = "import sys, config; print(sorted({'celery', 'django'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_started_process_has_not_imported_matplotlib():
    """The chart stack (about a second of every start) is imported by the first chart drawn: a
    process that has loaded every app, the admin and the URLs has not imported it."""
    code = (
        "import django, sys; django.setup(); from django.urls import get_resolver;"
        " get_resolver().url_patterns; import config.wsgi; print('matplotlib' in sys.modules)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False", out.stderr
