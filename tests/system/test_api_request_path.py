"""What a /v1 request passes through around its view (docs/reference/conventions.md,
docs/reference/limits.md "Browser security"): the console's sessions, messages and signed-in
user are not consulted, the Content-Security-Policy follows the setting, and content
negotiation answers as DRF's own."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.csp import CSP

from tests.audit.factories import decision_body
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db


def test_a_console_session_neither_authenticates_nor_follows_a_v1_request(api, anon_api):
    User.objects.create_superuser("root", "root@example.com", "right-password")
    console = Client()
    assert console.login(username="root", password="right-password")
    session_cookie = console.cookies["sessionid"].value

    anon_api.cookies["sessionid"] = session_cookie
    assert_problem(anon_api.get("/v1/audit-trail"), 401, "AUTHENTICATION_REQUIRED")

    api.cookies["sessionid"] = session_cookie
    response = api.post("/v1/log", decision_body(), format="json")
    assert response.status_code == 201
    assert not response.cookies  # no session, CSRF or messages cookie is set or renewed
    assert "Cookie" not in response.get("Vary", "")
    # the console itself still reads its session
    assert console.get("/admin/").status_code == 200


def test_the_policy_header_follows_the_setting(api, settings):
    first = api.post("/v1/log", decision_body(), format="json")
    assert "frame-ancestors 'none'" in first["Content-Security-Policy"]

    settings.SECURE_CSP = {**settings.SECURE_CSP, "img-src": [CSP.SELF]}
    changed = api.post("/v1/log", decision_body(), format="json")
    assert "img-src 'self';" in changed["Content-Security-Policy"] + ";"
    assert "data:" not in changed["Content-Security-Policy"].split("img-src")[1].split(";")[0]

    # a nonce that no template used is left out, as Django's own middleware does
    settings.SECURE_CSP = {**settings.SECURE_CSP, "script-src": [CSP.SELF, CSP.NONCE]}
    assert api.get("/v1/health")["Content-Security-Policy"] == changed["Content-Security-Policy"]

    settings.SECURE_CSP = {}
    assert "Content-Security-Policy" not in api.get("/v1/health")


@pytest.mark.parametrize(
    "accept", [None, "*/*", "application/json", "application/json; indent=2", "*/*; q=0.5"]
)
def test_json_is_answered_to_every_accept_it_satisfies(api, accept):
    headers = {"HTTP_ACCEPT": accept} if accept is not None else {}
    response = api.post("/v1/log", decision_body(), format="json", **headers)
    assert response.status_code == 201
    assert response["Content-Type"].startswith("application/json")
    if accept == "application/json; indent=2":
        assert response.content.startswith(b"{\n  ")


def test_an_accept_json_cannot_satisfy_is_not_acceptable(api):
    response = api.post("/v1/log", decision_body(), format="json", HTTP_ACCEPT="text/html")
    assert_problem(response, 406, "NOT_ACCEPTABLE")
    assert api.post("/v1/log?format=json", decision_body(), format="json").status_code == 201
