"""A key changed in one process applies at once in another that has it cached
(docs/reference/access.md, Authentication; keys/keycache.py): real gunicorn servers on the
test database and Redis, the change made through the API of another server, the staff console
or the keys service of this process."""

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client

from keys.services import api_key_revoke, api_key_rotate
from tests.conftest import make_key
from tests.processes import gunicorn

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def servers(django_db_setup, django_db_blocker) -> Iterator[tuple[str, str]]:
    with django_db_blocker.unblock(), gunicorn() as one, gunicorn() as other:
        yield one, other


def call(base: str, value: str, path: str = "/v1/engines/status", method: str = "GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {value}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def cached_in(base: str, value: str, path: str = "/v1/engines/status") -> None:
    for _ in range(3):
        assert call(base, value, path)[0] == 200


def test_a_key_revoked_through_another_servers_api_stops_at_once(servers):
    one, other = servers
    admin, issued = make_key("admin", is_admin=True), make_key("acme")
    cached_in(other, issued.value)
    assert (
        call(one, admin.value, f"/v1/admin/api-keys/{issued.key.id}", "DELETE", {"reason": "leaked"})[0]
        == 200
    )
    status, body = call(other, issued.value)
    assert (status, body["code"]) == (401, "INVALID_API_KEY")


def test_a_key_revoked_by_the_service_stops_at_once_in_a_server(servers):
    _, other = servers
    issued = make_key("acme")
    cached_in(other, issued.value)
    api_key_revoke(key=issued.key, reason="leaked")
    assert call(other, issued.value)[0] == 401


def test_a_key_revoked_in_the_staff_console_stops_at_once_in_a_server(servers):
    _, other = servers
    issued = make_key("acme")
    cached_in(other, issued.value)
    staff = Client()
    staff.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    data = {"action": "revoke_keys", "_selected_action": [issued.key.pk], "apply": "1", "reason": "lost"}
    assert staff.post("/admin/keys/apikey/", data).status_code == 302
    assert call(other, issued.value)[0] == 401


def test_a_rotated_keys_old_secret_fails_at_once_when_there_is_no_grace(servers, settings):
    _, other = servers
    issued = make_key("acme")
    cached_in(other, issued.value)
    settings.KEY_ROTATION_GRACE_HOURS = 0
    replacement = api_key_rotate(key=issued.key)
    assert call(other, issued.value)[0] == 401
    assert call(other, replacement.value)[0] == 200


def test_a_rotated_admin_key_stops_administering_at_once(servers):
    one, other = servers
    admin = make_key("admin", is_admin=True)
    cached_in(other, admin.value, "/v1/admin/api-keys")
    assert call(one, admin.value, f"/v1/admin/api-keys/{admin.key.id}/rotate", "POST", {})[0] == 200
    assert call(other, admin.value, "/v1/admin/api-keys")[0] == 403
    assert call(other, admin.value)[0] == 200  # in its rotation grace for everything else
