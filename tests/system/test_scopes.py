"""Key scopes by structure (docs/reference/access.md, "Key scopes"): every operation of the API
schema and every /v1 route of the URL resolver needs the scope this file's table names, a view
whose handler declares no scope cannot even be defined, and over HTTP a key without the scope
answers 403 INSUFFICIENT_SCOPE naming it while a key with only that scope gets past the check.
A route added later without a line in the table fails here."""

import re

import pytest
from django.urls import get_resolver, resolve
from drf_spectacular.generators import SchemaGenerator
from rest_framework.decorators import action
from rest_framework.response import Response

from config.api import TenantAPIView, TenantViewSet
from config.scopes import ALL_SCOPES, Scope
from tests.conftest import assert_problem, client_for, make_key
from tests.system.test_tenancy import PUBLIC, _methods, _sample_url, v1_routes

INGEST, READ, MANAGE = Scope.INGEST, Scope.READ, Scope.MANAGE

# (method, route) -> the scope it needs; ids in a route read x_1.
TABLE: dict[tuple[str, str], Scope] = {
    ("get", "/v1/engines/status"): READ,
    ("get", "/v1/metrics"): READ,
    ("post", "/v1/log"): INGEST,
    ("post", "/v1/log/batch"): INGEST,
    ("get", "/v1/audit-trail"): READ,
    ("get", "/v1/audit-trail/x_1"): READ,
    ("get", "/v1/audit-trail/verify"): READ,
    ("get", "/v1/audit-trail/checkpoints"): READ,
    ("post", "/v1/audit-trail/checkpoints"): MANAGE,
    ("get", "/v1/audit-trail/checkpoints/latest"): READ,
    ("get", "/v1/audit-trail/proofs/inclusion"): READ,
    ("get", "/v1/audit-trail/proofs/consistency"): READ,
    ("get", "/v1/audit-trail/export"): READ,
    ("get", "/v1/erasures"): READ,
    ("post", "/v1/erasures"): MANAGE,
    ("get", "/v1/erasures/x_1"): READ,
    ("get", "/v1/retention-policy"): READ,
    ("put", "/v1/retention-policy"): MANAGE,
    ("post", "/v1/calibrate"): INGEST,
    ("post", "/v1/trust-score"): READ,
    ("get", "/v1/trust-score/trend"): READ,
    ("post", "/v1/export"): READ,
    ("get", "/v1/export/templates"): READ,
    ("get", "/v1/export/x_1"): READ,
    ("get", "/v1/export/x_1/download"): READ,
    ("get", "/v1/exports"): READ,
    ("get", "/v1/system-profiles"): READ,
    ("get", "/v1/system-profiles/x_1"): READ,
    ("put", "/v1/system-profiles/x_1"): MANAGE,
    ("patch", "/v1/system-profiles/x_1"): MANAGE,
    ("get", "/v1/oversight/review-effort"): READ,
    ("get", "/v1/oversight/vigilance"): READ,
    ("post", "/v1/detect-bias"): INGEST,
    ("get", "/v1/bias/feed"): READ,
    ("get", "/v1/bias/feed/x_1"): READ,
    ("get", "/v1/bias/subgroups"): READ,
    ("get", "/v1/model-fairness-signals"): READ,
    ("post", "/v1/model-fairness-signals"): INGEST,
    ("get", "/v1/model-fairness-signals/x_1"): READ,
    ("get", "/v1/bias/amplification"): READ,
    ("get", "/v1/bias/amplification/x_1"): READ,
    ("patch", "/v1/bias/amplification/x_1"): MANAGE,
    ("post", "/v1/bias/amplification/analyze/x_1"): INGEST,
    ("get", "/v1/webhooks"): READ,
    ("post", "/v1/webhooks"): MANAGE,
    ("get", "/v1/webhooks/x_1"): READ,
    ("patch", "/v1/webhooks/x_1"): MANAGE,
    ("delete", "/v1/webhooks/x_1"): MANAGE,
    ("get", "/v1/webhooks/x_1/deliveries"): READ,
    ("post", "/v1/webhooks/x_1/enable"): MANAGE,
    ("post", "/v1/webhooks/x_1/rotate-secret"): MANAGE,
    ("post", "/v1/webhooks/x_1/test"): MANAGE,
    ("get", "/v1/drift-monitors"): READ,
    ("post", "/v1/drift-monitors"): MANAGE,
    ("get", "/v1/drift-monitors/x_1"): READ,
    ("patch", "/v1/drift-monitors/x_1"): MANAGE,
    ("delete", "/v1/drift-monitors/x_1"): MANAGE,
    ("post", "/v1/drift-monitors/x_1/calibrate"): MANAGE,
    ("get", "/v1/drift-monitors/x_1/series"): READ,
    ("get", "/v1/drift-alarms"): READ,
    ("get", "/v1/drift-alarms/x_1"): READ,
    ("post", "/v1/drift-alarms/x_1/acknowledge"): MANAGE,
}


def _admin_only(route: str) -> bool:
    return route.lstrip("/").removeprefix("v1/").lstrip("^").startswith("admin/")


def resolver_scopes() -> dict[tuple[str, str], Scope | None]:
    """What every customer route of the URL resolver declares, per method (None: nothing)."""
    found: dict[tuple[str, str], Scope | None] = {}
    for route, pattern, cls in v1_routes(get_resolver().url_patterns):
        if cls is None or issubclass(cls, PUBLIC) or _admin_only(route):
            continue
        actions = getattr(pattern.callback, "actions", None) or {}
        for method in _methods(pattern, cls):
            handler = actions.get(method, method)
            found[(method, _sample_url(route))] = getattr(cls, "scopes", {}).get(handler)
    return found


def schema_scopes() -> dict[tuple[str, str], str | None]:
    """What every operation of the API schema says it needs (`x-required-scope`)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    found: dict[tuple[str, str], str | None] = {}
    for path, operations in schema["paths"].items():
        if _admin_only(path) or not path.startswith("/v1/"):
            continue
        url = re.sub(r"\{[^}]+\}", "x_1", path).rstrip("/")
        if issubclass(resolve(url).func.cls, PUBLIC):
            continue  # health, the checkpoint key
        for method, operation in operations.items():
            found[(method, url)] = operation.get("x-required-scope")
    return found


def test_every_route_of_the_resolver_needs_the_scope_of_the_table():
    assert resolver_scopes() == TABLE


def test_every_operation_of_the_schema_needs_the_scope_of_the_table():
    assert schema_scopes() == {key: str(scope) for key, scope in TABLE.items()}


def test_a_view_whose_handler_declares_no_scope_cannot_be_defined():
    with pytest.raises(TypeError, match="put without a declared scope"):
        type(
            "Forgot",
            (TenantAPIView,),
            {"scopes": {"get": READ}, "get": lambda s, r: 1, "put": lambda s, r: 1},
        )
    with pytest.raises(TypeError, match="purge without a declared scope"):

        class ForgotAction(TenantViewSet):
            scopes = {"list": READ}

            def list(self, request):
                return Response([])

            @action(detail=False, methods=["post"])
            def purge(self, request):
                return Response({})

    with pytest.raises(TypeError, match="get without a declared scope"):
        type("NotAScope", (TenantAPIView,), {"scopes": {"get": "read"}, "get": lambda s, r: 1})


def test_the_walks_catch_a_route_missing_from_the_table():
    table = dict(TABLE)
    del table[("put", "/v1/retention-policy")]
    assert resolver_scopes() != table


def _bodyless_call(client, method: str, url: str):
    return getattr(client, method)(url, {}, format="json") if method != "get" else client.get(url)


@pytest.mark.django_db
def test_a_key_without_the_scope_answers_insufficient_scope_on_every_route():
    keys = {scope: client_for(make_key("acme", "enterprise", scopes=(scope,)).value) for scope in ALL_SCOPES}
    checked = 0
    for (method, url), needed in TABLE.items():
        for scope, client in keys.items():
            response = _bodyless_call(client, method, url)
            if scope == needed:
                assert response.status_code != 401, (method, url)
                if response.status_code == 403:
                    assert response.json()["code"] != "INSUFFICIENT_SCOPE", (method, url, scope)
                continue
            body = assert_problem(response, 403, "INSUFFICIENT_SCOPE")
            assert f"`{needed}`" in body["detail"] and scope in body["detail"], body
            checked += 1
    assert checked == 2 * len(TABLE)


@pytest.mark.django_db
def test_an_ingest_only_key_logs_but_cannot_lift_the_legal_hold_nor_erase():
    ingest = client_for(make_key("acme", "pilot", scopes=("ingest",)).value)
    logged = ingest.post(
        "/v1/log",
        {"user_id": "u1", "model_id": "m1", "ai_recommendation": "approve", "ai_confidence": 0.8,
         "user_decision": "approve", "subject_id": "s1"},
        format="json",
    )  # fmt: skip
    assert logged.status_code == 201, logged.content
    body = {"min_days": 183, "max_days": None, "legal_hold": False}
    assert_problem(ingest.put("/v1/retention-policy", body, format="json"), 403, "INSUFFICIENT_SCOPE")
    erase = {
        "subject_id": "s1",
        "reason": "asked",
        "legal_basis": "gdpr_art_17_1_a",
        "override_minimum": True,
    }
    assert_problem(ingest.post("/v1/erasures", erase, format="json"), 403, "INSUFFICIENT_SCOPE")
    assert_problem(ingest.get("/v1/audit-trail"), 403, "INSUFFICIENT_SCOPE")
    # A key of the same customer with `manage` may.
    manage = client_for(make_key("acme", "enterprise", scopes=("manage",)).value)
    assert manage.post("/v1/erasures", erase, format="json").status_code == 202
