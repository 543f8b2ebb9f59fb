"""A web process (config/wsgi.py) loads every view before its first request and freezes what it
loaded, so that a full garbage collection does not walk the service's own objects while holding
every thread of the process (docs/deploy.md, Web processes)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.processes import ROOT

PROBE = """
import gc, json, sys
import config.wsgi
print(json.dumps({"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects()),
                  "views_loaded": all(m in sys.modules for m in ("audit.views", "calibration.views", "bias.views")),
                  "first_write_loaded": all(m in sys.modules for m in (
                      "bias.contributions", "calibration.contributions", "oversight.contributions",
                      "compliance.contributions", "django.contrib.messages.storage.session", "rfc8785"))}))
"""


def _loaded(tmp_path: Path) -> dict:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    env = {**keep, "DJANGO_SETTINGS_MODULE": "config.settings.local", "TRUSTCAL_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_web_process_has_loaded_its_views_and_frozen_them_before_its_first_request(tmp_path: Path):
    loaded = _loaded(tmp_path)
    assert loaded["views_loaded"]
    # The service's own objects are frozen; the collector tracks only the few made since.
    assert loaded["frozen"] > 50_000
    assert loaded["tracked"] < loaded["frozen"] / 10


def test_the_web_process_has_loaded_what_the_first_write_would_import(tmp_path: Path):
    """The aggregates' modules that the decision pipeline discovers on its first write, the
    middleware's message storage and the audit hash's canonical JSON: loaded (and frozen) at
    start, not by the first request of each worker while the requests after it queue."""
    assert _loaded(tmp_path)["first_write_loaded"]
