"""The staff console's sign-in is throttled, every response carries a Content-Security-Policy,
and production settings serve HTTPS only (docs/reference/limits.md, "Console sign-in" and
"Browser security")."""

import base64
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import time_machine
from django.contrib.auth.models import User
from django.test import Client

from tests import processes

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


def _sign_in(client: Client, password: str, username: str = "root", address: str = "203.0.113.7"):
    return client.post(
        LOGIN, {"username": username, "password": password, "next": "/admin/"}, REMOTE_ADDR=address
    )


# Failures are counted in fixed windows of the clock (900 s): a run of sign-ins that crossed the
# end of one would start counting again. The clock stands still at the start of a window.
@time_machine.travel(1_800_000_000, tick=False)
def test_after_the_failure_limit_even_the_right_password_is_refused(settings):
    User.objects.create_superuser("root", "root@example.com", "right-password")
    client = Client()
    for _ in range(settings.ADMIN_LOGIN_FAILURES):
        assert _sign_in(client, "wrong").status_code == 200  # the form again, with its error
    refused = _sign_in(client, "right-password")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session
    # another address guessing the same user is refused too; another user from elsewhere is not
    assert _sign_in(Client(), "right-password", address="198.51.100.9").status_code == 429
    User.objects.create_user("ana", "ana@example.com", "ana-password", is_staff=True)
    assert _sign_in(Client(), "ana-password", username="ana", address="198.51.100.9").status_code == 302


def test_a_right_password_under_the_limit_signs_in(settings):
    User.objects.create_superuser("root", "root@example.com", "right-password")
    client = Client()
    for _ in range(settings.ADMIN_LOGIN_FAILURES - 1):
        _sign_in(client, "wrong")
    assert _sign_in(client, "right-password").status_code == 302


@pytest.mark.parametrize("path", ["/admin/login/", "/v1/docs", "/v1/health"])
def test_every_page_carries_a_content_security_policy_without_inline_script(client, path):
    response = client.get(path)
    policy = response["Content-Security-Policy"]
    assert (
        "script-src 'self'" in policy and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    )
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    if path == "/v1/docs":
        assert b"<script>" not in response.content  # Swagger UI's start-up script is a file
        assert client.get(path + "?script=").status_code == 200


def _production_env(**extra: str) -> dict[str, str]:
    """Production settings with what they require (docs/deploy.md): a secret key, a configured
    checkpoint key (owner-only) and report storage outside the host's data folder."""
    shared = Path(tempfile.mkdtemp(prefix="trustcal-shared-"))
    key = shared / "checkpoint.key"
    key.write_text(base64.b64encode(os.urandom(32)).decode())
    key.chmod(0o600)
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "s" * 50,
        "TRUSTCAL_CHECKPOINT_KEY": str(key),
        "TRUSTCAL_EXPORT_STORAGE_OPTIONS": json.dumps({"location": str(shared / "reports")}),
        **extra,
    }


def test_production_settings_pass_the_deploy_check_on_https_and_hsts(tmp_path):
    # A data folder and database of its own: the test's transaction holds the test database's
    # write lock (IMMEDIATE), and the check's fingerprint claim waited out the busy timeout three
    # times; and a check on another database in the tests' data folder would claim its embedded
    # broker for that database (trustcal.E006), refusing the servers the next tests start.
    env = processes.process_env(
        **_production_env(
            TRUSTCAL_DATA_DIR=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path / 'check.sqlite3'}"
        )
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    output = result.stdout + result.stderr
    for warning in ("security.W004", "security.W008", "security.W005", "security.W012", "security.W016"):
        assert warning not in output, output


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_production_redirects_http_to_https_and_sends_hsts(transactional_db):
    with processes.gunicorn(**_production_env()) as base:
        with pytest.raises(urllib.error.HTTPError) as redirected:
            opener = urllib.request.build_opener(_NoRedirect)
            opener.open(base + "/admin/login/", timeout=10)
        assert redirected.value.code == 301
        assert redirected.value.headers["Location"].startswith("https://")
        request = urllib.request.Request(base + "/admin/login/", headers={"X-Forwarded-Proto": "https"})
        with urllib.request.urlopen(request, timeout=10) as secure:
            assert secure.status == 200
            assert "max-age=31536000" in secure.headers["Strict-Transport-Security"]
            assert "default-src 'self'" in secure.headers["Content-Security-Policy"]
        with urllib.request.urlopen(base + "/v1/health", timeout=10) as probe:  # load balancers
            assert probe.status == 200


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
