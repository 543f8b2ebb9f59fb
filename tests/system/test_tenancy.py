"""Tenancy by structure: every /v1 route is public, admin-only, or served by a tenant base
(config.api.TenantViewSet / TenantAPIView), every route that is not public needs a key, the
bases refuse any override that could drop the tenant filter, and no route shows one customer
another customer's rows. The walks cover whatever the URL resolver serves, so a view added
later is checked too."""

import importlib
import re
from collections.abc import Iterator

import pytest
from django.test import override_settings
from django.urls import URLPattern, URLResolver, clear_url_caches, get_resolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.checkpoint_views import CheckpointKeyView
from config.api import TenantAPIView, TenantViewSet
from config.system import HealthView
from keys.authentication import IsAdminKey
from tests.conftest import client_for, make_key
from tests.fairness.helpers import post_signal

PUBLIC = (HealthView, CheckpointKeyView, SpectacularAPIView, SpectacularSwaggerView, SpectacularRedocView)


def _routes(patterns: list, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def _view_class(pattern: URLPattern) -> type | None:
    callback = pattern.callback
    return getattr(callback, "cls", None) or getattr(callback, "view_class", None)


def v1_routes(patterns: list) -> list[tuple[str, URLPattern, type | None]]:
    return [
        (route, pattern, _view_class(pattern))
        for route, pattern in _routes(patterns)
        if route.lstrip("^").startswith("v1/")
    ]


def unscoped(patterns: list) -> list[str]:
    """The /v1 routes served by a view that is neither public, nor admin-only, nor tenant-based."""
    return [route for route, _, cls in v1_routes(patterns) if cls is None or not _allowed(cls)]


def _allowed(cls: type) -> bool:
    return (
        issubclass(cls, PUBLIC)
        or issubclass(cls, TenantViewSet | TenantAPIView)
        or IsAdminKey in getattr(cls, "permission_classes", [])
    )


def _sample_url(route: str) -> str:
    """A concrete URL for a route: named groups get a made-up id, regex anchors go."""
    url = re.sub(r"\(\?P<\w+>[^)]*\)", "x_1", route)
    url = re.sub(r"<(?:\w+:)?\w+>", "x_1", url)
    url = url.replace("/?$", "").replace("$", "").replace("^", "").replace("\\.", ".")
    return "/" + url.rstrip("/")


def _methods(pattern: URLPattern, cls: type) -> list[str]:
    actions = getattr(pattern.callback, "actions", None)
    if actions:
        return sorted(set(actions) - {"head", "options"})
    return [m for m in ("get", "post", "put", "patch", "delete") if hasattr(cls, m)]


def test_every_v1_route_is_public_admin_only_or_tenant_scoped():
    assert unscoped(get_resolver().url_patterns) == []


class _Unscoped(APIView):
    def get(self, request):
        return Response({"everyone's": "data"})


def test_a_view_outside_the_tenant_bases_is_caught():
    patterns = [path("v1/", include([path("leaky", _Unscoped.as_view())])), *get_resolver().url_patterns]
    assert unscoped(patterns) == ["v1/leaky"]


@pytest.mark.django_db
def test_every_route_that_is_not_public_answers_401_without_a_key(client):
    checked = 0
    for route, pattern, cls in v1_routes(get_resolver().url_patterns):
        if cls is None or issubclass(cls, PUBLIC):
            continue
        url = _sample_url(route)
        for method in _methods(pattern, cls):
            response = getattr(client, method)(url, content_type="application/json")
            assert response.status_code == 401, (method, url, response.status_code)
            assert response.json()["code"] == "AUTHENTICATION_REQUIRED"
            checked += 1
    assert checked > 30  # the walk reached the API, not an empty list


def test_a_resource_viewset_cannot_replace_the_tenant_filter():
    with pytest.raises(TypeError, match="get_base_queryset"):

        class Sneaky(TenantViewSet):
            def get_queryset(self):
                return []


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("get_queryset", "def get_queryset(self): return []"),
        ("filter_queryset", "def filter_queryset(self, queryset): return queryset.model.objects.all()"),
        ("get_object", "def get_object(self): return None"),
        ("customer_field", "customer_field = 'id__isnull'"),
        ("permission_classes", "permission_classes = []"),
    ],
)
def test_a_mixin_listed_before_the_viewset_base_cannot_replace_what_holds_the_filter(name, body):
    namespace: dict = {}
    exec(f"class Mixin:\n    {body}", namespace)  # noqa: S102 - a class body written by this test
    with pytest.raises(TypeError, match=name):
        type("Sneaky", (namespace["Mixin"], TenantViewSet), {})


def test_an_action_view_cannot_drop_its_authentication_or_its_customer():
    from rest_framework.permissions import AllowAny

    with pytest.raises(TypeError, match="permission_classes"):
        type("Open", (TenantAPIView,), {"permission_classes": [AllowAny]})
    with pytest.raises(TypeError, match="customer"):
        type("Elsewhere", (TenantAPIView,), {"customer": property(lambda self: None)})


def test_a_urlconf_with_a_mixin_placed_override_cannot_even_be_loaded():
    with pytest.raises(TypeError, match="EveryCustomer"):
        importlib.import_module("tests.system.urls_mixin_override")


# --- behaviour: one customer never sees another's rows, on any route -------------------------

FOREIGN = "globex"


def _seed_foreign_customer(settings) -> set[str]:
    """Decisions (with subgroups, an outcome and a batch), a bias alert, a fairness signal with
    its amplification alert, a webhook and an export of customer `globex`, all through the API;
    returns the ids they got. Every user and model id holds the word `globex` as well."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    api = client_for(make_key(FOREIGN, "enterprise").value)
    items = []
    for i in range(80):
        male = i % 2 == 0
        ai_yes = (i % 10) < (6 if male else 4)
        human_yes = (i % 10) < (7 if male else 3)
        items.append(
            {
                "decision_id": f"{FOREIGN}-loan-{i}",
                "user_id": f"{FOREIGN}-officer-{i % 3}",
                "model_id": f"{FOREIGN}-model",
                "ai_recommendation": "approve" if ai_yes else "deny",
                "ai_confidence": 0.3 + (i % 7) / 10,
                "user_decision": "approve" if human_yes else "deny",
                "outcome": "approve" if i % 3 else "deny",
                "subgroups": {"gender": "male" if male else "female"},
            }
        )
    batch = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert batch.status_code == 200 and batch.json()["accepted"] == 80, batch.content
    ids = {r["entry_id"] for r in batch.json()["results"]}
    single = api.post(
        "/v1/log",
        {
            "user_id": f"{FOREIGN}-officer-9",
            "model_id": f"{FOREIGN}-model",
            "ai_recommendation": "approve",
            "ai_confidence": 0.2,
            "user_decision": "approve",
        },
        format="json",
    )
    assert single.status_code == 201, single.content
    ids |= {single.json()["decision_id"], single.json()["entry_id"]}
    detected = api.post(
        "/v1/detect-bias",
        {"decision_id": f"{FOREIGN}-loan-1", "subgroups": {"gender": "female"}},
        format="json",
    )
    assert detected.status_code == 200, detected.content
    signal = post_signal(api, modelId=f"{FOREIGN}-model", modelVersion=...)
    assert signal.status_code == 201, signal.content
    ids |= {signal.json()["id"], signal.json()["alertId"] or "", detected.json()["alert_id"] or ""}
    hook = api.post(
        "/v1/webhooks",
        {"url": "http://127.0.0.1:9/globex", "events": ["*"], "description": FOREIGN},
        format="json",
    )
    assert hook.status_code == 201, hook.content
    export = api.post("/v1/export", {"template": "eu_ai_act", "format": "json"}, format="json")
    assert export.status_code == 202, export.content
    ids |= {hook.json()["webhook_id"], export.json()["export_id"]}
    return ids - {""}


def _body(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


def foreign_rows_seen(patterns: list, api, foreign_ids: set[str]) -> list[str]:
    """The routes whose GET answer, to a customer with no data of its own, mentions the other
    customer's rows: list routes as they are, object routes with each of the other's ids."""
    leaks = []
    for route, pattern, cls in v1_routes(patterns):
        if cls is None or issubclass(cls, PUBLIC) or "get" not in _methods(pattern, cls):
            continue
        urls = [_sample_url(route)]
        if urls[0].count("x_1") == 1:
            urls = [urls[0].replace("x_1", foreign_id) for foreign_id in sorted(foreign_ids)]
        for url in urls:
            body = _body(api.get(url))
            if FOREIGN.encode() in body or any(foreign_id.encode() in body for foreign_id in foreign_ids):
                leaks.append(route)
                break
    return leaks


@pytest.fixture
def foreign_ids(db, settings) -> set[str]:
    return _seed_foreign_customer(settings)


def test_no_route_shows_one_customer_another_customers_rows(foreign_ids):
    fresh = client_for(make_key("initech", "enterprise").value)
    assert foreign_rows_seen(get_resolver().url_patterns, fresh, foreign_ids) == []
    # The walk looked at real data: the owner sees its rows on the same routes.
    owner = client_for(make_key(FOREIGN, "enterprise").value)
    assert FOREIGN.encode() in _body(owner.get("/v1/audit-trail"))


def test_the_walk_catches_a_list_view_that_reads_past_its_queryset(foreign_ids):
    fresh = client_for(make_key("initech", "enterprise").value)
    with override_settings(ROOT_URLCONF="tests.system.urls_leaky"):
        clear_url_caches()
        try:
            leaks = foreign_rows_seen(get_resolver().url_patterns, fresh, foreign_ids)
        finally:
            clear_url_caches()
    assert leaks == ["v1/leaky-decisions"]
