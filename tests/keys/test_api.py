"""API keys, authentication and tenancy over HTTP (docs/reference/access.md)."""

import datetime as dt
import logging
import time

import pytest
import time_machine
from django.core.management import call_command
from django.test import override_settings

from keys.models import AdminAuditLog, ApiKey
from keys.services import key_usage_flush
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db

CREATE = "/v1/admin/api-keys"


def _create(admin_api, **body):
    payload = {"customer_id": "acme", "tier": "pilot", "description": "integration"} | body
    return admin_api.post(CREATE, payload, format="json")


def test_request_without_bearer_header_answers_401_authentication_required(anon_api):
    response = anon_api.get("/v1/engines/status")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "AUTHENTICATION_REQUIRED"


def test_non_bearer_scheme_is_treated_as_missing_credentials(anon_api):
    anon_api.credentials(HTTP_AUTHORIZATION="Basic dXNlcjpwYXNz")
    assert anon_api.get("/v1/engines/status").json()["code"] == "AUTHENTICATION_REQUIRED"


def test_unknown_key_answers_401_invalid_api_key():
    response = client_for("tcal_" + "x" * 40).get("/v1/engines/status")
    assert response.status_code == 401
    assert response.json()["code"] == "INVALID_API_KEY"


def test_non_admin_key_on_admin_endpoint_answers_403_admin_required(api):
    response = api.get(CREATE)
    assert response.status_code == 403
    assert response.json()["code"] == "ADMIN_REQUIRED"


def test_created_key_has_the_documented_shape_and_works_at_once(admin_api):
    response = _create(admin_api, tier="growth")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {
        "key_id",
        "api_key",
        "customer_id",
        "tier",
        "description",
        "is_admin",
        "scopes",
        "rate_limit",
        "burst",
        "created_at",
    }
    assert body["api_key"].startswith("tcal_") and len(body["api_key"]) == 45
    assert body["api_key"][5:].isalnum()
    assert (body["rate_limit"], body["burst"]) == (500, 750)
    assert body["key_id"].startswith("key_")
    assert body["created_at"].endswith("Z")
    assert client_for(body["api_key"]).get("/v1/engines/status").status_code == 200


def test_key_value_is_stored_only_as_a_digest_and_never_listed(admin_api):
    value = _create(admin_api).json()["api_key"]
    stored = ApiKey.objects.get(prefix=value[:9])
    assert stored.digest != value and len(stored.digest) == 64
    listing = admin_api.get(CREATE, {"customer_id": "acme"})
    assert listing.status_code == 200
    assert value not in listing.content.decode()
    assert stored.digest not in listing.content.decode()
    item = listing.json()["data"][0]
    assert item["key_prefix"] == value[:9]
    assert "api_key" not in item


def test_key_value_never_appears_in_a_log_line(admin_api, caplog):
    caplog.set_level(logging.DEBUG)
    value = _create(admin_api).json()["api_key"]
    client_for(value).get("/v1/engines/status")
    client_for(value + "x").get("/v1/engines/status")
    assert all(value not in record.getMessage() for record in caplog.records)


def test_invalid_create_bodies_answer_validation_error(admin_api):
    assert _create(admin_api, tier="gold").json()["code"] == "VALIDATION_ERROR"
    missing = admin_api.post(CREATE, {"tier": "pilot"}, format="json").json()
    assert missing["code"] == "VALIDATION_ERROR"
    assert missing["errors"][0]["field"] == "customer_id"


def test_revoked_key_stops_at_once_and_revoking_again_is_409(admin_api):
    created = _create(admin_api).json()
    client = client_for(created["api_key"])
    assert client.get("/v1/engines/status").status_code == 200
    response = admin_api.delete(f"{CREATE}/{created['key_id']}", {"reason": "leaked"}, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "revoked" and response.json()["reason"] == "leaked"
    assert client.get("/v1/engines/status").json()["code"] == "INVALID_API_KEY"
    again = admin_api.delete(f"{CREATE}/{created['key_id']}")
    assert again.status_code == 409 and again.json()["code"] == "API_KEY_NOT_ACTIVE"


def test_revoke_takes_the_reason_from_the_query_string_too(admin_api):
    created = _create(admin_api).json()
    response = admin_api.delete(f"{CREATE}/{created['key_id']}?reason=offboarded")
    assert response.json()["reason"] == "offboarded"


def test_rotated_key_works_for_24_hours_then_answers_401(admin_api):
    created = _create(admin_api).json()
    with time_machine.travel(dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC), tick=False):
        response = admin_api.post(f"{CREATE}/{created['key_id']}/rotate")
        assert response.status_code == 200
        rotated = response.json()
        assert rotated["previous_key_id"] == created["key_id"]
        assert rotated["previous_key_expires_at"] == "2026-11-22T12:00:00.000Z"
        assert rotated["customer_id"] == "acme" and rotated["tier"] == "pilot"
        assert rotated["description"] == "integration"
    old, new = client_for(created["api_key"]), client_for(rotated["api_key"])
    with time_machine.travel(dt.datetime(2026, 11, 22, 11, 59, tzinfo=dt.UTC), tick=False):
        assert old.get("/v1/engines/status").status_code == 200
        status = admin_api.get(CREATE, {"status": "rotated"}).json()["data"]
        assert [k["key_id"] for k in status] == [created["key_id"]]
    with time_machine.travel(dt.datetime(2026, 11, 22, 12, 0, 1, tzinfo=dt.UTC), tick=False):
        assert old.get("/v1/engines/status").json()["code"] == "INVALID_API_KEY"
        assert new.get("/v1/engines/status").status_code == 200
        expired = admin_api.get(CREATE, {"status": "expired"}).json()["data"]
        assert [k["key_id"] for k in expired] == [created["key_id"]]
        assert expired[0]["replaced_by"] == rotated["key_id"]
        # An expired key can be neither rotated nor revoked.
        assert admin_api.post(f"{CREATE}/{created['key_id']}/rotate").json()["code"] == "API_KEY_NOT_ACTIVE"
        assert admin_api.delete(f"{CREATE}/{created['key_id']}").json()["code"] == "API_KEY_NOT_ACTIVE"


def test_revoking_a_key_in_its_rotation_grace_stops_it_at_once(admin_api):
    created = _create(admin_api).json()
    admin_api.post(f"{CREATE}/{created['key_id']}/rotate")
    assert admin_api.delete(f"{CREATE}/{created['key_id']}").status_code == 200
    assert client_for(created["api_key"]).get("/v1/engines/status").status_code == 401


def test_admin_actions_are_logged_with_the_acting_admin(admin_api, admin_key):
    admin_api.credentials(
        HTTP_AUTHORIZATION=f"Bearer {admin_key.value}", HTTP_X_ADMIN_USER="alice@example.com"
    )
    created = _create(admin_api).json()
    rotated = admin_api.post(f"{CREATE}/{created['key_id']}/rotate").json()
    admin_api.delete(f"{CREATE}/{rotated['key_id']}", {"reason": "test"}, format="json")
    log = admin_api.get("/v1/admin/audit-log").json()["data"]
    actions = [(e["action"], e["key_id"]) for e in log[:3]]
    assert actions == [
        ("api_key.revoked", rotated["key_id"]),
        ("api_key.rotated", created["key_id"]),
        ("api_key.created", created["key_id"]),
    ]
    assert log[1]["new_key_id"] == rotated["key_id"]
    assert log[0]["reason"] == "test"
    assert all(
        e["admin_key_id"] == admin_key.key.id and e["admin_user"] == "alice@example.com" for e in log[:3]
    )
    assert AdminAuditLog.objects.count() >= 3


def test_list_filters_by_customer_tier_and_status(admin_api):
    make_key("initech", "growth")
    make_key("initech", "pilot")
    body = admin_api.get(CREATE, {"customer_id": "initech", "tier": "growth"}).json()
    assert [k["tier"] for k in body["data"]] == ["growth"]
    assert body["pagination"] == {"page": 1, "limit": 50, "total": 1, "total_pages": 1, "has_more": False}
    assert admin_api.get(CREATE, {"status": "bogus"}).json()["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("query", [{"limit": 101}, {"limit": 0}, {"page": 0}, {"page": "x"}])
def test_out_of_range_paging_answers_400(admin_api, query):
    response = admin_api.get(CREATE, query)
    assert response.status_code == 400
    assert response.json()["code"] == "VALIDATION_ERROR"


def test_a_page_past_the_last_answers_200_with_empty_data(admin_api):
    body = admin_api.get(CREATE, {"page": 99}).json()
    assert body["data"] == [] and body["pagination"]["has_more"] is False


def test_list_is_newest_first_and_paged(admin_api):
    ids = [make_key(f"c{i}", "pilot").key.id for i in range(3)]
    page = admin_api.get(CREATE, {"limit": 2}).json()
    assert page["pagination"]["has_more"] is True
    everything = [k["key_id"] for k in admin_api.get(CREATE, {"limit": 100}).json()["data"]]
    assert everything.index(ids[2]) < everything.index(ids[1]) < everything.index(ids[0])


@pytest.mark.django_db(transaction=True)
def test_last_used_is_written_by_the_process_within_the_flush_interval_without_another_request():
    issued = make_key("acme", "pilot")
    with override_settings(KEY_USAGE_FLUSH_SECONDS=0.2):
        assert client_for(issued.value).get("/v1/engines/status").status_code == 200
        deadline = time.monotonic() + 10
        while ApiKey.objects.get(pk=issued.key.pk).last_used is None and time.monotonic() < deadline:
            time.sleep(0.1)
    assert ApiKey.objects.get(pk=issued.key.pk).last_used is not None


def test_last_used_and_request_count_30d_are_kept_without_a_write_per_request(
    admin_api, django_assert_max_num_queries
):
    issued = make_key("acme", "pilot")
    client = client_for(issued.value)
    with override_settings(KEY_USAGE_FLUSH_SECONDS=3600):
        key_usage_flush()
        # Authentication is one read; usage is counted in memory.
        with django_assert_max_num_queries(1):
            client.options("/v1/engines/status")
        for _ in range(4):
            client.get("/v1/engines/status")
        assert ApiKey.objects.get(pk=issued.key.pk).last_used is None
    key_usage_flush()
    item = next(
        k
        for k in admin_api.get(CREATE, {"customer_id": "acme"}).json()["data"]
        if k["key_id"] == issued.key.id
    )
    assert item["request_count_30d"] == 5
    assert item["last_used"] is not None


def test_unknown_key_id_answers_404(admin_api):
    assert admin_api.delete(f"{CREATE}/key_nope").json()["code"] == "NOT_FOUND"
    assert admin_api.post(f"{CREATE}/key_nope/rotate").status_code == 404


def test_create_api_key_command_prints_the_value_alone_on_the_last_line(capsys):
    call_command(
        "create_api_key", "--customer-id", "cli", "--tier", "growth", "--admin", "--description", "ops"
    )
    value = capsys.readouterr().out.strip().splitlines()[-1]
    assert value.startswith("tcal_") and len(value) == 45
    assert client_for(value).get("/v1/admin/api-keys").status_code == 200


def test_bootstrap_admin_key_is_ensured_by_migrate(settings):
    value = "tcal_" + "Hq3ZpT8mWc2KxR5vLb9NdF1sJg7YtE4uAo6PiC0e"
    settings.TRUSTCAL_BOOTSTRAP_ADMIN_KEY = value
    call_command("migrate", verbosity=0)
    call_command("migrate", verbosity=0)  # idempotent
    keys = ApiKey.objects.filter(prefix=value[:9])
    assert keys.count() == 1
    assert keys.get().customer_id == "admin" and keys.get().is_admin and keys.get().tier == "enterprise"
    assert client_for(value).get("/v1/admin/api-keys").status_code == 200


@pytest.mark.postgres
def test_concurrent_usage_flushes_in_different_orders_neither_deadlock_nor_lose_counts(transactional_db):
    import random
    import threading

    from django.db import connection as thread_connection
    from django.utils import timezone

    from keys.models import ApiKeyUsageDay
    from keys.services import key_usage_write

    keys = [make_key("acme", "pilot").key.id for _ in range(20)]
    today = timezone.now().date()

    def flusher(seed: int) -> None:
        order = keys[:]
        random.Random(seed).shuffle(order)
        for _ in range(10):
            key_usage_write(
                counts={(k, today): 1 for k in order}, last_used={k: timezone.now() for k in order}
            )
        thread_connection.close()

    threads = [threading.Thread(target=flusher, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counts = dict(ApiKeyUsageDay.objects.filter(key_id__in=keys).values_list("key_id", "count"))
    assert counts == dict.fromkeys(keys, 60)


@pytest.mark.parametrize("customer_id", [".", "..", "a/b", "a b", "x" * 65, "", "é", "a\\b"])
def test_a_customer_id_outside_its_alphabet_is_refused(admin_api, customer_id):
    response = _create(admin_api, customer_id=customer_id)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "VALIDATION_ERROR"
    assert response.json()["errors"][0]["field"] == "customer_id"
    assert not ApiKey.objects.filter(customer_id=customer_id).exists()


@pytest.mark.parametrize("customer_id", ["a", "...", "acme.eu:prod-1_b", "x" * 64])
def test_a_customer_id_of_its_alphabet_is_accepted(admin_api, customer_id):
    assert _create(admin_api, customer_id=customer_id).status_code == 201
