"""The admin API's query parameters and the X-Admin-User header go through the one input
layer (docs/reference/conventions.md, Strings): overlong or NUL-holding values are a 400
problem document, and a refused request changes nothing."""

import pytest

from keys.models import AdminAuditLog, ApiKey

pytestmark = pytest.mark.django_db

KEYS = "/v1/admin/api-keys"


def _create(admin_api, **extra):
    body = {"customer_id": "acme", "tier": "pilot", "description": "integration"}
    return admin_api.post(KEYS, body, format="json", **extra)


def _problem(response, field: str):
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "VALIDATION_ERROR"
    assert response.json()["errors"][0]["field"] == field


@pytest.mark.parametrize("reason", ["x" * 501, "a\x00b"])
def test_a_revoke_reason_in_the_query_that_is_overlong_or_holds_nul_is_refused(admin_api, reason):
    key_id = _create(admin_api).json()["key_id"]
    response = admin_api.delete(f"{KEYS}/{key_id}", QUERY_STRING=f"reason={reason.replace(chr(0), '%00')}")
    _problem(response, "reason")
    assert ApiKey.objects.get(pk=key_id).revoked_at is None


def test_a_revoke_reason_of_500_characters_in_the_query_is_kept_whole(admin_api):
    key_id = _create(admin_api).json()["key_id"]
    response = admin_api.delete(f"{KEYS}/{key_id}", QUERY_STRING="reason=" + "r" * 500)
    assert response.status_code == 200
    assert response.json()["reason"] == "r" * 500


@pytest.mark.parametrize(
    "query", ["customer_id=" + "c" * 129, "customer_id=a%00b", "status=gone", "tier=%00"]
)
def test_key_list_filters_are_checked(admin_api, query):
    response = admin_api.get(KEYS, QUERY_STRING=query)
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"


def test_key_list_filter_by_customer_still_works(admin_api):
    _create(admin_api)
    assert [k["customer_id"] for k in admin_api.get(KEYS, {"customer_id": "acme"}).json()["data"]] == ["acme"]
    assert admin_api.get(KEYS, {"customer_id": "nobody"}).json()["data"] == []


@pytest.mark.parametrize("user", ["u" * 256, "alice\x01", "alice\x7f"])
def test_an_overlong_or_control_character_admin_user_header_is_refused_and_nothing_changes(admin_api, user):
    before = (ApiKey.objects.count(), AdminAuditLog.objects.count())
    _problem(_create(admin_api, HTTP_X_ADMIN_USER=user), "X-Admin-User")
    assert (ApiKey.objects.count(), AdminAuditLog.objects.count()) == before


def test_an_admin_user_header_is_recorded_trimmed(admin_api):
    key_id = _create(admin_api, HTTP_X_ADMIN_USER="  alice@example.com ").json()["key_id"]
    entry = AdminAuditLog.objects.get(key_id=key_id)
    assert entry.admin_user == "alice@example.com"
