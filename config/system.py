"""System endpoints (C13): /health (public), /engines/status, /metrics.

Each app may add an `engine.py` with `engines() -> list[dict]` and `metrics() -> dict`;
they are found by name, so apps never edit this file to appear here."""

import datetime as dt
import importlib
import importlib.util
import logging
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Q
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from config import metrics as request_metrics
from config.api import TenantAPIView
from config.redis import get_redis
from config.timeutils import isoformat

logger = logging.getLogger("trustcal.system")

DOMAIN_APPS = ["keys", "audit", "calibration", "bias", "fairness", "webhooks", "compliance"]


def _timed(check: Callable[[], dict[str, Any] | None]) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        extra = check() or {}
        result = {"status": "pass", **extra}
    except Exception as exc:
        result = {"status": "fail", "error": type(exc).__name__}
    result["latency_ms"] = round((time.perf_counter() - started) * 1000, 2)
    return result


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_cache() -> dict[str, Any]:
    token = str(time.time_ns())
    cache.set("trustcal:health", token, 30)
    if cache.get("trustcal:health") != token:
        raise RuntimeError("cache read-back mismatch")
    return {"backend": "redis" if settings.REDIS_URL else "local-memory"}


@lru_cache(maxsize=4)
def _broker_client(url: str):
    import redis

    return (
        get_redis()
        if url == settings.REDIS_URL
        else redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    )


def _check_broker() -> dict[str, Any]:
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        _broker_client(url).ping()
        return {"backend": "redis"}
    if url.startswith(("trustcalfs://", "filesystem://")):
        folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        # A private probe name: concurrent health checks must not unlink each other's file.
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".health-", suffix=".probe"):
            pass
        return {"backend": "embedded-filesystem", "queued": sum(1 for _ in folder.glob("*.msg"))}
    return {"backend": url.split(":", 1)[0]}


def _check_workers() -> dict[str, Any]:
    from config.models import WorkerHeartbeat

    since = timezone.now() - dt.timedelta(seconds=settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS)
    figures = WorkerHeartbeat.objects.aggregate(
        online=Count("id", filter=Q(last_seen__gte=since)), latest=Max("last_seen")
    )
    online, latest = figures["online"], figures["latest"]
    if not online:
        raise RuntimeError("no worker heartbeat in the last 60 s")
    return {"online": online, "last_heartbeat_at": isoformat(latest)}


def health_snapshot() -> tuple[dict[str, Any], int]:
    checks = {"database": _timed(_check_database)}
    if checks["database"]["status"] == "pass":
        checks["cache"] = _timed(_check_cache)
        checks["broker"] = _timed(_check_broker)
        workers = _timed(_check_workers)
        if workers["status"] == "fail":
            workers["online"] = 0
        checks["workers"] = workers
        status = "healthy" if all(c["status"] == "pass" for c in checks.values()) else "degraded"
        http_status = 200
    else:
        checks["cache"] = _timed(_check_cache)
        checks["broker"] = _timed(_check_broker)
        checks["workers"] = {"status": "fail", "error": "database unreachable", "online": 0}
        status, http_status = "unhealthy", 503
    body = {
        "status": status,
        "version": settings.SERVICE_VERSION,
        "timestamp": isoformat(timezone.now()),
        "checks": checks,
    }
    return body, http_status


def _app_hooks(name: str) -> list[Callable[..., Any]]:
    hooks = []
    for app in DOMAIN_APPS:
        module_name = f"{app}.engine"
        if importlib.util.find_spec(module_name) is None:
            continue
        module = importlib.import_module(module_name)
        hook = getattr(module, name, None)
        if hook is not None:
            hooks.append(hook)
    return hooks


# Engine fields any key may see: the service's own state, nothing built from customers' data.
PUBLIC_ENGINE_FIELDS = {"name", "status", "version", "workers_online", "settings"}


def engines_snapshot(*, customer: Any = None) -> list[dict[str, Any]]:
    """Every engine; with `customer` (a non-admin caller) only the public fields, the last
    activity withheld (it moves when any customer acts), plus that customer's own figures."""
    engines: list[dict[str, Any]] = []
    for hook in _app_hooks("engines"):
        try:
            engines.extend(hook())
        except Exception:
            logger.exception("engine status failed: %s", hook.__module__)
            engines.append(
                {
                    "name": hook.__module__.split(".")[0],
                    "status": "down",
                    "version": settings.SERVICE_VERSION,
                    "last_activity_at": None,
                }
            )
    if customer is None:
        return engines
    own: dict[str, dict[str, Any]] = {}
    for hook in _app_hooks("customer_engines"):
        for name, figures in hook(customer).items():
            own.setdefault(name, {}).update(figures)
    scoped = []
    for engine in engines:
        public = {k: v for k, v in engine.items() if k in PUBLIC_ENGINE_FIELDS}
        public["last_activity_at"] = None
        public.update(own.get(engine["name"], {}))
        scoped.append(public)
    return scoped


def metrics_snapshot(*, customer: Any = None) -> dict[str, Any]:
    """C13's figures. An admin key (customer None) sees the platform's; any other key sees the
    service's own figures (requests, latency, queue depths, internal errors) and, under the same
    keys, its own customer's decisions, signals and deliveries (`scope: "customer"`)."""
    body: dict[str, Any] = {"scope": "platform" if customer is None else "customer"}
    body["requests"] = request_metrics.snapshot()
    body.update({"decisions_logged": 0, "signals_ingested": 0, "deliveries": {}, "queues": {}})
    if customer is None:
        hooks = [hook() for hook in _app_hooks("metrics")]
    else:
        hooks = [hook() for hook in _app_hooks("platform_metrics")]
        hooks += [hook(customer) for hook in _app_hooks("customer_metrics")]
    for figures in hooks:
        for key, value in figures.items():
            if isinstance(value, dict) and isinstance(body.get(key), dict):
                body[key].update(value)
            else:
                body[key] = value
    body["queues"].setdefault("broker", _broker_depth())
    body["timestamp"] = isoformat(timezone.now())
    return body


def _broker_depth() -> int | None:
    url = settings.CELERY_BROKER_URL
    try:
        if url.startswith(("trustcalfs://", "filesystem://")):
            return sum(
                1 for _ in Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]).glob("*.msg")
            )
        client = get_redis()
        if client is not None and url == settings.REDIS_URL:
            return int(client.llen("celery"))
    except Exception:
        return None
    return None


class _Snapshot:
    """A prometheus_client collector over one /metrics snapshot (the library escapes label
    values and formats the exposition)."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        body = self.body
        requests = CounterMetricFamily(
            "trustcal_requests", "HTTP requests served under /v1.", labels=["status_class"]
        )
        for status_class, count in body["requests"]["by_status"].items():
            requests.add_metric([status_class], count)
        yield requests
        latency = HistogramMetricFamily(
            "trustcal_request_duration_seconds",
            "Request latency per resolved route (`unmatched` for paths that match none).",
            labels=["route"],
        )
        for route, figures in request_metrics.histograms().items():
            cumulative, buckets = 0, []
            for bound, count in figures["buckets"]:
                cumulative += count
                if bound != float("inf"):
                    buckets.append((repr(bound / 1000.0), cumulative))
            buckets.append(("+Inf", figures["count"]))
            latency.add_metric([route], buckets, figures["sum_ms"] / 1000.0)
        yield latency
        for name in ("decisions_logged", "signals_ingested"):
            family = CounterMetricFamily(
                f"trustcal_{name}", f"{name.replace('_', ' ').capitalize()} ({body['scope']} scope)."
            )
            family.add_metric([], body.get(name) or 0)
            yield family
        deliveries = GaugeMetricFamily(
            "trustcal_deliveries", f"Webhook deliveries by status ({body['scope']} scope).", labels=["status"]
        )
        for status, count in (body.get("deliveries") or {}).items():
            deliveries.add_metric([status], count)
        yield deliveries
        queues = GaugeMetricFamily("trustcal_queue_depth", "Queue depths.", labels=["queue"])
        for queue, depth in (body.get("queues") or {}).items():
            if isinstance(depth, int | float):
                queues.add_metric([queue], depth)
        yield queues
        errors = CounterMetricFamily(
            "trustcal_delivery_internal_errors",
            "Errors of the service's own code while sending a webhook (never counted as failed attempts).",
        )
        errors.add_metric([], body.get("delivery_internal_errors") or 0)
        yield errors


def prometheus_text(body: dict[str, Any]) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(body))  # type: ignore[arg-type]
    return generate_latest(registry).decode("utf-8")


_check = inline_serializer(
    "HealthCheck",
    {"status": serializers.ChoiceField(choices=["pass", "fail"]), "latency_ms": serializers.FloatField()},
)


class HealthView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        auth=[],
        responses={
            (200, "application/json"): inline_serializer(
                "Health",
                {
                    "status": serializers.ChoiceField(choices=["healthy", "degraded", "unhealthy"]),
                    "version": serializers.CharField(),
                    "timestamp": serializers.CharField(),
                    "checks": serializers.DictField(child=_check),
                },
            ),
            (503, "application/json"): OpenApiResponse(description="Database unreachable (status unhealthy)"),
        },
    )
    def get(self, request):
        body, status = health_snapshot()
        return Response(body, status=status)


class EnginesStatusView(TenantAPIView):
    @extend_schema(
        responses=inline_serializer(
            "EnginesStatus",
            {
                "engines": serializers.ListField(child=serializers.DictField()),
                "timestamp": serializers.CharField(),
            },
        )
    )
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
    renderer_classes = [JSONRenderer, PlainTextRenderer]

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "prometheus"])],
        responses={
            (200, "application/json"): inline_serializer(
                "Metrics",
                {
                    "requests": serializers.DictField(),
                    "decisions_logged": serializers.IntegerField(),
                    "signals_ingested": serializers.IntegerField(),
                    "deliveries": serializers.DictField(),
                    "queues": serializers.DictField(),
                },
            ),
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
