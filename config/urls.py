from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from config.admin_site import favicon, permission_denied_page
from config.api import paths, problem_response, router
from config.system import EnginesStatusView, HealthView, MetricsView

# Importing each app's urls registers its viewsets on the one /v1 router.
APP_URLS = [
    "keys.urls",
    "audit.urls",
    "calibration.urls",
    "bias.urls",
    "fairness.urls",
    "webhooks.urls",
    "compliance.urls",
    "oversight.urls",
    "drift.urls",
]
app_patterns = []
for module in APP_URLS:
    app_patterns.append(path("", include(module)))

v1_patterns: list = [
    *paths("health", HealthView.as_view(), "health"),
    *paths("engines/status", EnginesStatusView.as_view(), "engines-status"),
    *paths("metrics", MetricsView.as_view(), "metrics"),
    *paths("schema", SpectacularAPIView.as_view(), "schema"),
    *paths("docs", SpectacularSwaggerSplitView.as_view(url_name="schema"), "docs"),
    *paths("redoc", SpectacularRedocView.as_view(url_name="schema"), "redoc"),
    *app_patterns,
    path("", include(router.urls)),
]

urlpatterns = [
    path("v1/", include(v1_patterns)),
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
]

handler403 = permission_denied_page


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return problem_response(
        request, status=404, code="NOT_FOUND", title="Not found", detail=f"No route for {request.path}."
    )


def handler500(request: HttpRequest) -> HttpResponse:
    return problem_response(
        request,
        status=500,
        code="INTERNAL_ERROR",
        title="Internal server error",
        detail="An unexpected error occurred.",
    )
