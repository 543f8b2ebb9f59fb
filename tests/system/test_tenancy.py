"""Tenancy by structure: every /v1 route is public, admin-only, or served by a tenant base
(config.api.TenantViewSet / TenantAPIView), and every route that is not public needs a key.
The walk covers whatever the URL resolver serves, so a view added later is checked too."""

import re
from collections.abc import Iterator

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import TenantAPIView, TenantViewSet
from config.system import HealthView
from keys.authentication import IsAdminKey

PUBLIC = (HealthView, SpectacularAPIView, SpectacularSwaggerView, SpectacularRedocView)


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
