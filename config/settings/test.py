"""Settings for the test suite: the same embedded defaults, with a private data folder, and
under pytest-xdist a data folder and a Redis database of each worker's own (rate limits,
broker, cache)."""

import os
import re
import tempfile

os.environ.setdefault("TRUSTCAL_DATA_DIR", tempfile.mkdtemp(prefix="trustcal-test-"))

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw"):
    # The xdist workers inherit the controller's folder. Shared, it would be one embedded broker
    # queue for all of them, and a Celery worker started by one test would take the messages
    # another worker's test sent for its own database (and run them against the wrong one).
    os.environ["TRUSTCAL_DATA_DIR"] = os.path.join(os.environ["TRUSTCAL_DATA_DIR"], _worker)
if os.environ.get("REDIS_URL") and _worker.startswith("gw"):
    _match = re.match(r"^(redis://[^/]+)(?:/(\d+))?$", os.environ["REDIS_URL"])
    if _match:
        _base_db = int(_match.group(2) or 0)
        os.environ["REDIS_URL"] = f"{_match.group(1)}/{_base_db + int(_worker[2:])}"

from .base import *  # noqa: E402, F403
from .base import DATABASES  # noqa: E402

# Tests write buffered key usage explicitly (keys.services.key_usage_flush) or shorten this.
KEY_USAGE_FLUSH_SECONDS = 3600.0
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # An on-disk test database so that processes started by the tests share it.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}  # noqa: F405
# The tests sign checkpoints before and after what they check, seconds apart; the minimum
# interval of requested checkpoints is tested with its own value (tests/audit/test_checkpoints.py).
CHECKPOINT_MIN_SECONDS = 0.0
