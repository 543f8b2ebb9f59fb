"""One checkpoint key and one secret key on every host (docs/deploy.md, "One key and one secret
everywhere"): production processes on one database, each with its own environment, as hosts
are. The first start registers the keys' fingerprints; a host with another secret key
(trustcal.E007) or checkpoint key (trustcal.E008) refuses to start with the fix in its message,
a host in the middle of a secret rotation passes, and `deployment_keys --register` ends a
rotation."""

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import processes

pytestmark = pytest.mark.django_db(transaction=True)


def _key(path: Path) -> str:
    path.write_text(base64.b64encode(os.urandom(32)).decode())
    path.chmod(0o600)
    return str(path)


def _host(tmp_path: Path, name: str, secret: str, checkpoint_key: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "TRUSTCAL_", "CELERY_"))}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DATABASE_URL": processes.database_url(),
            "TRUSTCAL_DATA_DIR": str(tmp_path / name),
            "DJANGO_SECRET_KEY": secret,
            "TRUSTCAL_CHECKPOINT_KEY": checkpoint_key,
            "TRUSTCAL_EXPORT_STORAGE_OPTIONS": f'{{"location": "{tmp_path / "shared-reports"}"}}',
            **extra,
        }
    )
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_host_with_another_secret_or_checkpoint_key_refuses_to_start(tmp_path):
    shared_key, other_key = _key(tmp_path / "shared.key"), _key(tmp_path / "other.key")
    secret, other_secret = "s" * 50, "t" * 50
    first = _run(_host(tmp_path, "web1", secret, shared_key), "check")
    assert first.returncode == 0, first.stderr
    same = _run(_host(tmp_path, "worker1", secret, shared_key), "check")
    assert same.returncode == 0, same.stderr

    wrong_secret = _run(_host(tmp_path, "web2", other_secret, shared_key), "check")
    assert wrong_secret.returncode != 0
    assert "trustcal.E007" in wrong_secret.stderr and "same environment file" in wrong_secret.stderr

    wrong_key = _run(_host(tmp_path, "worker2", secret, other_key), "check")
    assert wrong_key.returncode != 0
    assert "trustcal.E008" in wrong_key.stderr and "Copy the deployment's key file" in wrong_key.stderr
    # A worker refuses the same way as it starts (config/celery.py runs the checks).
    worker = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from config.checks import startup_check; startup_check()",
        ],
        cwd=processes.ROOT,
        env=_host(tmp_path, "worker2", secret, other_key),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode != 0 and "trustcal.E008" in worker.stderr


def test_a_secret_rotation_passes_with_the_old_key_as_fallback_and_ends_with_register(tmp_path):
    key = _key(tmp_path / "shared.key")
    old, new = "o" * 50, "n" * 50
    assert _run(_host(tmp_path, "web1", old, key), "check").returncode == 0
    rolling = _host(tmp_path, "web2", new, key, DJANGO_SECRET_KEY_FALLBACKS=old)
    assert _run(rolling, "check").returncode == 0  # the new key, the old one still accepted
    shown = _run(rolling, "deployment_keys")
    assert "secret_key" in shown.stdout and "DIFFERENT" in shown.stdout

    registered = _run(rolling, "deployment_keys", "--register")
    assert registered.returncode == 0 and "DIFFERENT" not in registered.stdout
    assert _run(_host(tmp_path, "web3", new, key), "check").returncode == 0
    stale = _run(_host(tmp_path, "web1", old, key), "check")
    assert stale.returncode != 0 and "trustcal.E007" in stale.stderr
