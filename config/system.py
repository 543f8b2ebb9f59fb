"""System endpoints (docs/reference/system.md): /health (public), /engines/status, /metrics. The figures
come from `config.health`, `config.engines` (the apps' `engine.py` hooks) and `config.prometheus`."""

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import TenantAPIView
from config.engines import engines_snapshot, metrics_snapshot
from config.health import health_snapshot
from config.prometheus import prometheus_text
from config.scopes import Scope
from config.system_schema import EnginesStatusOutput, HealthOutput, MetricsOutput
from config.timeutils import isoformat


class HealthView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        auth=[],
        responses={
            (200, "application/json"): HealthOutput,
            (503, "application/json"): OpenApiResponse(
                HealthOutput, description="The database is unreachable (status unhealthy)"
            ),
        },
    )
    def get(self, request):
        body, status = health_snapshot()
        return Response(body, status=status)


class EnginesStatusView(TenantAPIView):
    scopes = {"get": Scope.READ}

    @extend_schema(responses=EnginesStatusOutput)
    def get(self, request):
        customer = None if request.user.is_admin else self.customer
        return Response(
            {
                "engines": engines_snapshot(customer=customer),
                "scope": "customer" if customer is not None else "platform",
                "timestamp": isoformat(timezone.now()),
            }
        )


class PlainTextRenderer(JSONRenderer):
    media_type = "text/plain"
    format = "prometheus"


class MetricsView(TenantAPIView):
    scopes = {"get": Scope.READ}
    renderer_classes = [JSONRenderer, PlainTextRenderer]

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "prometheus"])],
        responses={
            (200, "application/json"): MetricsOutput,
            (200, "text/plain"): OpenApiTypes.STR,
        },
    )
    def get(self, request):
        body = metrics_snapshot(customer=None if request.user.is_admin else self.customer)
        wants_text = request.query_params.get("format") == "prometheus" or (
            "text/plain" in request.headers.get("Accept", "")
            and "application/json" not in request.headers.get("Accept", "")
        )
        if wants_text:
            return HttpResponse(
                prometheus_text(body), content_type="text/plain; version=0.0.4; charset=utf-8"
            )
        return Response(body)
