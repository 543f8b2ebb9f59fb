"""The test suite's own settings (config.settings.test): under pytest-xdist each worker has a
data folder of its own. They inherit the controller's; shared, it was one embedded broker queue,
and a Celery worker started by a test on one xdist worker took the messages a test on the other
had sent for its own database (a full chain check then waited a minute for beat to resend it)."""

import json
import os
import subprocess
import sys

from tests.processes import ROOT

SHOW = """
import json
from django.conf import settings
print(json.dumps([str(settings.DATA_DIR), settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("data_folder_in")]))
"""


def _folders(worker: str, data_dir: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings.test", "TRUSTCAL_DATA_DIR": data_dir})
    env["PYTEST_XDIST_WORKER"] = worker
    shown = subprocess.check_output([sys.executable, "-c", SHOW], cwd=ROOT, env=env, text=True, timeout=60)
    return json.loads(shown)


def test_each_xdist_worker_has_a_data_folder_and_a_broker_queue_of_its_own(tmp_path):
    first, second = _folders("gw0", str(tmp_path)), _folders("gw1", str(tmp_path))
    assert first[0] != second[0] and first[1] != second[1]
    assert first[0].startswith(str(tmp_path)) and second[0].startswith(str(tmp_path))
