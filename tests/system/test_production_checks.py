"""Production settings refuse host-local state at every start (docs/deploy.md, "What every
start checks"): `manage.py check` lists each problem with its reason, and a fully configured
multi-host environment passes."""

import base64
import os
import subprocess
import sys
from pathlib import Path

from tests import processes


def _check(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", *args],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "TRUSTCAL_", "CELERY_"))}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "TRUSTCAL_DATA_DIR": str(tmp_path / "data"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    return env


def test_production_refuses_every_piece_of_host_local_state_with_its_reason(tmp_path):
    env = _production_env(tmp_path, TRUSTCAL_BEAT_SCHEDULE="celerybeat-schedule")
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    refused = _check(env)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    for code in ("trustcal.E001", "trustcal.E002", "trustcal.E003", "trustcal.E004"):
        assert code in output, output
    assert "DJANGO_SECRET_KEY must be set" in output
    assert "TRUSTCAL_CHECKPOINT_KEY is not set" in output
    assert "this host's data folder" in output and "TRUSTCAL_EXPORT_STORAGE_BACKEND" in output
    assert "TRUSTCAL_BEAT_SCHEDULE" in output
    assert "trustcal.W001" in output and "trustcal.W002" in output  # SQLite, no Redis: warned
    assert not (tmp_path / "data" / "checkpoint-ed25519.pem").exists()  # no host key generated
    # The web process itself refuses to start the same way (gunicorn imports config.wsgi).
    web = subprocess.run(
        [sys.executable, "-c", "import config.wsgi"],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert web.returncode != 0 and "trustcal.E002" in web.stderr


def test_a_fully_configured_production_host_passes(tmp_path):
    key = tmp_path / "checkpoint.key"
    key.write_text(base64.b64encode(os.urandom(32)).decode())
    key.chmod(0o600)
    env = _production_env(
        tmp_path,
        DJANGO_SECRET_KEY="s" * 50,
        TRUSTCAL_CHECKPOINT_KEY=str(key),
        TRUSTCAL_EXPORT_STORAGE_OPTIONS=f'{{"location": "{tmp_path / "shared-reports"}"}}',
    )
    accepted = _check(env, "--deploy")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "trustcal.E" not in accepted.stdout + accepted.stderr
