"""Admin keys cannot outlive their revocation, key guessing is throttled, keys stay out of logs,
and the embedded data folder is private (issue: noisy neighbours and admin keys)."""

import logging
import os
import stat
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from keys.models import AdminAuditLog, ApiKey
from keys.services import key_digest, key_value_generate
from tests.conftest import client_for
from tests.processes import BIN, ROOT, free_port, process_env, stop

pytestmark = pytest.mark.django_db

KEYS = "/v1/admin/api-keys"


def test_rotated_admin_key_keeps_working_outside_admin_but_not_on_admin_paths(admin_api, admin_key):
    rotated = admin_api.post(f"{KEYS}/{admin_key.key.id}/rotate")
    assert rotated.status_code == 200
    old = client_for(admin_key.value)
    assert old.get("/v1/webhooks").status_code == 200  # still a key of its customer during the grace
    minted = old.post(KEYS, {"customer_id": "x", "tier": "pilot", "is_admin": True}, format="json")
    assert minted.status_code == 403 and minted.json()["code"] == "ADMIN_REQUIRED"
    again = old.post(f"{KEYS}/{rotated.json()['key_id']}/rotate")
    assert again.status_code == 403
    assert client_for(rotated.json()["api_key"]).get(KEYS).status_code == 200


def test_bootstrap_key_that_does_not_look_like_a_key_is_refused_and_logged(settings, caplog):
    settings.TRUSTCAL_BOOTSTRAP_ADMIN_KEY = "letmein"
    with caplog.at_level(logging.ERROR, logger="trustcal.keys"):
        call_command("migrate", verbosity=0)
    assert not ApiKey.objects.filter(prefix="letmein").exists()
    assert "TRUSTCAL_BOOTSTRAP_ADMIN_KEY is ignored" in caplog.text
    assert client_for("letmein").get(KEYS).status_code == 401


@pytest.mark.parametrize(
    "value",
    ["tcal_" + "a" * 40, "tcal_" + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN", "tcal_" + "ab12" * 10],
)
def test_bootstrap_key_that_does_not_look_random_is_refused(settings, caplog, value):
    settings.TRUSTCAL_BOOTSTRAP_ADMIN_KEY = value
    with caplog.at_level(logging.ERROR, logger="trustcal.keys"):
        call_command("migrate", verbosity=0)
    assert not ApiKey.objects.filter(digest=key_digest(value)).exists()
    assert "TRUSTCAL_BOOTSTRAP_ADMIN_KEY is ignored" in caplog.text
    assert client_for(value).get(KEYS).status_code == 401


def test_a_generated_bootstrap_key_is_accepted(settings):
    value = key_value_generate()
    settings.TRUSTCAL_BOOTSTRAP_ADMIN_KEY = value
    call_command("migrate", verbosity=0)
    assert client_for(value).get(KEYS).status_code == 200


def test_revoked_bootstrap_key_is_not_restored_by_the_next_migrate(settings, caplog, admin_api):
    value = "tcal_" + "R7kQz2Lm9XpA4vBn8WcT1yHs5JdG3eFu6KiN0oPr"
    settings.TRUSTCAL_BOOTSTRAP_ADMIN_KEY = value
    call_command("migrate", verbosity=0)
    key = ApiKey.objects.get(prefix=value[:9])
    assert admin_api.delete(f"{KEYS}/{key.id}").status_code == 200
    with caplog.at_level(logging.ERROR, logger="trustcal.keys"):
        call_command("migrate", verbosity=0)
    key.refresh_from_db()
    assert key.status == ApiKey.Status.REVOKED
    assert "is not restored" in caplog.text
    assert client_for(value).get(KEYS).status_code == 401
    assert AdminAuditLog.objects.filter(key_id=key.id).count() == 2  # created, revoked: nothing else


def test_failed_authentication_is_throttled_per_client_address(settings):
    settings.AUTH_FAILURES_PER_MINUTE = 5
    codes = [client_for(f"tcal_{'g' * 39}{i}").get("/v1/webhooks").status_code for i in range(7)]
    assert codes[:5] == [401] * 5 and codes[5:] == [429, 429]
    blocked = client_for(f"tcal_{'h' * 40}").get("/v1/webhooks")
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) >= 1
    # another address is not affected
    assert client_for(f"tcal_{'h' * 40}").get("/v1/webhooks", REMOTE_ADDR="10.9.9.9").status_code == 401


def test_query_string_never_reaches_the_development_server_log(caplog):
    from config.logfilters import StripQueryString

    record = logging.LogRecord(
        "django.server",
        logging.WARNING,
        __file__,
        1,
        '"%s" %s %s',
        ("GET /v1/webhooks?api_key=tcal_secret HTTP/1.1", "401", "12"),
        None,
    )
    StripQueryString().filter(record)
    assert "tcal_secret" not in record.getMessage() and "/v1/webhooks HTTP/1.1" in record.getMessage()


def test_gunicorn_access_log_has_no_query_string(tmp_path):
    log = tmp_path / "access.log"
    port = free_port()
    proc = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--access-logfile",
            str(log),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=process_env(),
    )
    try:
        deadline = time.time() + 60  # the app loads first: seconds on a busy machine
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health?api_key=tcal_leak", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
    finally:
        stop(proc)
    text = log.read_text()
    assert "/v1/health" in text and "tcal_leak" not in text


def test_embedded_data_folder_is_private():
    mode = stat.S_IMODE(os.stat(settings.DATA_DIR).st_mode)
    assert mode == 0o700
    probe = Path(settings.DATA_DIR) / "probe-permissions"
    probe.write_text("x")
    try:
        assert stat.S_IMODE(probe.stat().st_mode) == 0o600
    finally:
        probe.unlink()


@pytest.mark.django_db
def test_a_key_rotated_in_the_admin_is_shown_once_and_never_put_in_a_cookie_or_the_session(
    client, django_user_model
):
    from keys.models import ApiKey
    from tests.conftest import make_key

    staff = django_user_model.objects.create_superuser("root", "root@example.com", "pw-123456789")
    client.force_login(staff)
    key = make_key("acme", "growth").key
    rotated = client.post("/admin/keys/apikey/", {"action": "rotate_keys", "_selected_action": [key.id]})
    new = ApiKey.objects.exclude(pk=key.id).get(customer_id="acme")
    # The value is on the page that answers the action, and nowhere else: no messages cookie
    # (Django's default keeps messages in a signed, readable cookie) and not in the session.
    assert rotated.status_code == 200
    assert new.id in rotated.content.decode() and b"tcal_" in rotated.content
    assert "messages" not in rotated.cookies, rotated.cookies
    assert "tcal_" not in str(dict(client.session.items()))
