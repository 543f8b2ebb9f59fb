"""Conventions and errors over HTTP (docs/reference/conventions.md, docs/reference/errors.md)."""

import json

import pytest

pytestmark = pytest.mark.django_db

KEYS = "/v1/admin/api-keys"


def _assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    body = json.loads(response.content)
    assert body["code"] == code and body["status"] == status and body["type"] == "about:blank"
    assert body["title"] and body["detail"]
    assert body["request_id"] == response["X-Request-ID"]
    return body


def test_malformed_json_answers_400_invalid_json(admin_api):
    response = admin_api.generic("POST", KEYS, '{"customer_id": "a",', content_type="application/json")
    _assert_problem(response, 400, "INVALID_JSON")


def test_a_non_json_content_type_answers_415(admin_api):
    response = admin_api.generic(
        "POST", KEYS, "customer_id=a", content_type="application/x-www-form-urlencoded"
    )
    _assert_problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")


def test_a_body_over_1_mib_answers_413(admin_api):
    body = json.dumps({"customer_id": "a", "tier": "pilot", "description": "x" * (1024 * 1024)})
    response = admin_api.generic("POST", KEYS, body, content_type="application/json")
    _assert_problem(response, 413, "PAYLOAD_TOO_LARGE")


def test_a_json_array_body_answers_validation_error(admin_api):
    response = admin_api.generic("POST", KEYS, "[1, 2]", content_type="application/json")
    _assert_problem(response, 400, "VALIDATION_ERROR")


def test_unknown_route_under_v1_answers_problem_404(api):
    _assert_problem(api.get("/v1/no-such-thing"), 404, "NOT_FOUND")
    _assert_problem(api.get("/v1/admin/api-keys/x/y/z"), 404, "NOT_FOUND")


def test_wrong_method_answers_problem_405(api):
    _assert_problem(api.put("/v1/health", {}, format="json"), 405, "METHOD_NOT_ALLOWED")
    _assert_problem(api.delete("/v1/metrics"), 405, "METHOD_NOT_ALLOWED")


def test_path_with_trailing_slash_reaches_the_same_handler_without_redirect(admin_api):
    for path in ("/v1/admin/api-keys", "/v1/admin/api-keys/", "/v1/health", "/v1/health/"):
        assert admin_api.get(path).status_code == 200, path


def test_client_request_id_is_echoed_and_generated_otherwise(anon_api):
    echoed = anon_api.get("/v1/engines/status", HTTP_X_REQUEST_ID="abc-123")
    assert echoed["X-Request-ID"] == "abc-123"
    assert json.loads(echoed.content)["request_id"] == "abc-123"
    generated = anon_api.get("/v1/health")
    assert generated["X-Request-ID"].startswith("req_")
    hostile = anon_api.get("/v1/health", HTTP_X_REQUEST_ID="<script>" + "x" * 300)
    assert hostile["X-Request-ID"].startswith("req_")


@pytest.mark.urls("tests.system.urls_failing")
@pytest.mark.parametrize("path", ["/v1/boom", "/v1/plain-boom"])
def test_a_server_error_is_a_problem_without_internals(api, path):
    api.raise_request_exception = False
    body = _assert_problem(api.get(path), 500, "INTERNAL_ERROR")
    assert "secret" not in json.dumps(body) and "Traceback" not in json.dumps(body)


@pytest.mark.urls("tests.system.urls_failing")
def test_a_database_locked_past_its_busy_timeout_is_a_503_that_says_busy_and_when_to_retry(api):
    response = api.get("/v1/locked")
    body = _assert_problem(response, 503, "SERVICE_UNAVAILABLE")
    assert body["detail"].startswith("The database is busy") and response["Retry-After"] == "1"


def test_timestamps_are_iso_utc_with_z_and_milliseconds(admin_api):
    created = admin_api.post(KEYS, {"customer_id": "a", "tier": "pilot"}, format="json").json()["created_at"]
    assert len(created) == 24 and created.endswith("Z") and created[19] == "."
