"""Key scopes on the keys themselves (docs/reference/access.md, "Key scopes"): set on creation
(default all three), shown when listed, kept by rotation, and all three on keys created before
scopes existed. What each route needs: tests/system/test_scopes.py."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from keys.models import ApiKey
from tests.conftest import assert_problem, client_for

CREATE = "/v1/admin/api-keys"


def _create(admin_api, **body):
    payload = {"customer_id": "acme", "tier": "pilot"} | body
    return admin_api.post(CREATE, payload, format="json")


@pytest.mark.django_db
def test_a_key_gets_the_scopes_it_is_created_with_and_keeps_them_through_rotation(admin_api):
    created = _create(admin_api, scopes=["read", "ingest"])
    assert created.status_code == 201, created.content
    assert created.json()["scopes"] == ["ingest", "read"]  # in the documented order
    listed = admin_api.get(CREATE, {"customer_id": "acme"}).json()["data"]
    assert [key["scopes"] for key in listed] == [["ingest", "read"]]
    assert admin_api.get(f"{CREATE}/{created.json()['key_id']}").json()["scopes"] == ["ingest", "read"]
    rotated = admin_api.post(f"{CREATE}/{created.json()['key_id']}/rotate")
    assert rotated.status_code == 200 and rotated.json()["scopes"] == ["ingest", "read"]
    new = client_for(rotated.json()["api_key"])
    assert new.get("/v1/audit-trail").status_code == 200
    assert_problem(new.put("/v1/retention-policy", {}, format="json"), 403, "INSUFFICIENT_SCOPE")
    # The old key, in its grace period, keeps its scopes too.
    old = client_for(created.json()["api_key"])
    assert_problem(old.post("/v1/erasures", {}, format="json"), 403, "INSUFFICIENT_SCOPE")


@pytest.mark.django_db
def test_a_key_created_without_scopes_holds_all_three(admin_api):
    assert _create(admin_api).json()["scopes"] == ["ingest", "read", "manage"]
    # null is the same as left out (docs/reference/conventions.md)
    assert _create(admin_api, scopes=None).json()["scopes"] == ["ingest", "read", "manage"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "scopes", [[], ["write"], "read", {}, ["read", None], ["read", "read", "read", "read"], [1]]
)
def test_scopes_other_than_a_non_empty_subset_answer_400_and_store_nothing(admin_api, scopes):
    before = ApiKey.objects.count()
    body = assert_problem(_create(admin_api, scopes=scopes), 400, "VALIDATION_ERROR")
    assert any(error["field"].startswith("scopes") for error in body["errors"]), body
    assert ApiKey.objects.count() == before


@pytest.mark.django_db
def test_create_api_key_command_takes_scopes(capsys):
    call_command("create_api_key", "--customer-id", "acme", "--tier", "pilot", "--scopes", "read,manage")
    value = capsys.readouterr().out.strip().splitlines()[-1]
    api = client_for(value)
    assert api.get("/v1/audit-trail").status_code == 200
    assert_problem(api.post("/v1/log", {}, format="json"), 403, "INSUFFICIENT_SCOPE")


@pytest.mark.django_db(transaction=True)
def test_keys_created_before_scopes_existed_hold_all_three():
    executor = MigrationExecutor(connection)
    executor.migrate([("keys", "0001_initial")])
    old = executor.loader.project_state([("keys", "0001_initial")]).apps
    customer = old.get_model("keys", "Customer").objects.create(id="acme")
    old.get_model("keys", "ApiKey").objects.create(
        id="key_old", customer=customer, digest="d" * 64, prefix="tcal_abcd", tier="pilot"
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert ApiKey.objects.get(id="key_old").scope_list == ["ingest", "read", "manage"]
