"""The checkpoint signing key never stops logging (docs/reference/checkpoints.md, "The signing
key"): appends never sign, a key that cannot be read pauses checkpoints (503 on the checkpoint
endpoints, /health says so) while POST /log goes on; a generated key that went missing while
its checkpoints exist is never replaced; a key file readable by others is refused; and every
process refuses to start on such a key, with the reason."""

import base64
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit import checkpoint_key
from audit.exceptions import CheckpointKeyError
from audit.models import SignedCheckpoint
from tests import processes
from tests.audit.factories import all_entries, decision_body
from tests.audit.test_checkpoints import log_batch
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db


def _seed_file(path, mode: int = 0o600) -> str:
    seed = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    path.write_text(base64.b64encode(seed).decode() + "\n")
    path.chmod(mode)
    return str(path)


def test_a_corrupt_configured_key_never_fails_an_append_and_pauses_checkpoints(
    settings, key_path, api, anon_api, worker_signs
):
    bad = key_path / "corrupt.key"
    bad.write_text("this is not a key\n")
    bad.chmod(0o600)
    settings.TRUSTCAL_CHECKPOINT_KEY = str(bad)
    with worker_signs():
        log_batch(api, 999)
        logged = api.post("/v1/log", decision_body(), format="json")  # entry 1,000
    assert logged.status_code == 201, logged.content
    assert len(all_entries(api)) == 1000 and not SignedCheckpoint.objects.exists()
    health = anon_api.get("/v1/health").json()
    assert health["checks"]["checkpoint_key"]["status"] == "fail"
    assert health["status"] == "degraded" and str(key_path) not in str(health)
    assert_problem(api.post("/v1/audit-trail/checkpoints"), 503, "SERVICE_UNAVAILABLE")
    assert_problem(anon_api.get("/v1/audit-trail/checkpoint-key"), 503, "SERVICE_UNAVAILABLE")
    # The key fixed: checkpoints resume with no restart (a failed read is not remembered).
    settings.TRUSTCAL_CHECKPOINT_KEY = _seed_file(key_path / "good.key")
    assert anon_api.get("/v1/health").json()["checks"]["checkpoint_key"]["status"] == "pass"
    assert api.post("/v1/audit-trail/checkpoints").json()["sequence"] == 1000


def test_a_lost_generated_key_is_never_replaced_while_its_checkpoints_exist(settings, key_path, api):
    settings.TRUSTCAL_CHECKPOINT_KEY = ""
    generated = key_path / "data" / "checkpoint.pem"
    settings.TRUSTCAL_CHECKPOINT_KEY_DEFAULT = generated
    log_batch(api, 3)
    assert api.post("/v1/audit-trail/checkpoints").status_code == 201
    kept = generated.read_bytes()
    generated.unlink()
    checkpoint_key.signing_key.cache_clear()
    with pytest.raises(CheckpointKeyError) as caught:
        checkpoint_key.signing_key()
    assert not generated.exists()  # nothing generated in its place
    assert "1 checkpoints signed by it exist" in caught.value.detail
    assert f"Restore the file from a backup to {generated}" in caught.value.detail
    assert api.post("/v1/log", decision_body(), format="json").status_code == 201
    assert_problem(api.post("/v1/audit-trail/checkpoints"), 503, "SERVICE_UNAVAILABLE")
    generated.write_bytes(kept)
    generated.chmod(0o600)
    assert api.post("/v1/audit-trail/checkpoints").status_code == 201
    assert api.get("/v1/audit-trail/verify").json()["first_invalid_checkpoint"] is None


def test_a_key_file_readable_by_group_or_others_is_refused(settings, key_path, anon_api):
    for mode in (0o640, 0o604):
        settings.TRUSTCAL_CHECKPOINT_KEY = _seed_file(key_path / f"key-{mode:o}", mode)
        checkpoint_key.signing_key.cache_clear()
        with pytest.raises(CheckpointKeyError) as caught:
            checkpoint_key.signing_key()
        assert "readable by group or others" in caught.value.detail and "chmod 600" in caught.value.detail
    settings.TRUSTCAL_CHECKPOINT_KEY = _seed_file(key_path / "owner-only")
    checkpoint_key.signing_key.cache_clear()
    assert anon_api.get("/v1/audit-trail/checkpoint-key").status_code == 200


@pytest.mark.parametrize(
    "argv",
    [
        ["manage.py", "check"],
        ["-c", "import config.wsgi"],  # what every gunicorn worker does first
        ["-m", "celery", "-A", "config", "worker", "--loglevel", "WARNING"],
        ["-m", "celery", "-A", "config", "beat", "--loglevel", "WARNING"],
    ],
    ids=["check", "web", "worker", "beat"],
)
def test_every_process_refuses_to_start_on_a_key_it_cannot_use(tmp_path, argv):
    bad = tmp_path / "shared.key"
    _seed_file(bad, 0o644)
    env = processes.process_env(TRUSTCAL_CHECKPOINT_KEY=str(bad), TRUSTCAL_DATA_DIR=str(tmp_path / "data"))
    env.pop("DATABASE_URL")  # an empty embedded database of its own
    env.pop("REDIS_URL")
    started = subprocess.run(
        [sys.executable, *argv], cwd=processes.ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    output = started.stdout + started.stderr
    assert started.returncode != 0, output
    assert "trustcal.E005" in output and "readable by group or others" in output and str(bad) in output
