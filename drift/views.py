"""The drift monitors and alarms (docs/reference/drift.md, The API). Another customer's monitor or
alarm is a 404 on every route (the tenant-scoped base)."""

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import PagePagination, TenantViewSet
from config.bodymodels import body_parse
from config.inputs import positive_int
from config.scopes import Scope
from drift import selectors, services
from drift.filters import AlarmFilters, MonitorFilters
from drift.inputs import AcknowledgeInput, CalibrateInput, MonitorCreateInput, MonitorUpdateInput
from drift.models import DriftAlarm, DriftMonitor
from drift.outputs import alarm_json, monitor_json, point_json

MONITOR_EXAMPLE = OpenApiExample(
    "A monitor",
    value={"monitor_id": "mon_01jd...", "name": "over_reliance rev-1", "chart": "over_reliance",
           "scope": "user", "user_id": "rev-1", "model_id": "loan", "model_version": None, "odds_ratio": 2.0,
           "h": 4.0, "h_source": "given", "arl0_target": None, "seed": 8812731, "runs": 2000,
           "baseline": {"mode": "next", "decisions": 200, "collected": 37, "first_sequence": 2,
                        "last_sequence": None, "completed_at": None, "entry_sequence": None, "fit": None},
           "sprt": None, "calibration": None, "status": "baseline", "enabled": True,
           "state": {"points": 0, "statistic": 0.0, "last_sequence": 40, "open_alarm_id": None,
                     "alarms_raised": 0, "conclusions_h0": None, "conclusions_h1": None},
           "configured_sequence": 1, "created_at": "2026-11-27T10:00:00.000Z",
           "updated_at": "2026-11-27T10:15:30.123Z"},
)  # fmt: skip
OBJECT = OpenApiResponse(description="JSON object (docs/reference/drift.md)")
ALARM_EXAMPLE = OpenApiExample(
    "An alarm",
    value={
        "alarm_id": "alm_01jd...",
        "monitor_id": "mon_01jd...",
        "monitor": {
            "name": "over_reliance rev-1",
            "chart": "over_reliance",
            "scope": "user",
            "user_id": "rev-1",
            "model_id": "loan",
            "model_version": None,
            "odds_ratio": 2.0,
            "h": 4.0,
        },
        "chart": "over_reliance",
        "user_id": "rev-1",
        "model_id": "loan",
        "status": "open",
        "point_index": 10,
        "decision_id": "loan-4711",
        "decision_sequence": 223,
        "statistic": 4.307829,
        "threshold": 4.0,
        "run": {
            "start_index": 1,
            "points": 10,
            "first_sequence": 213,
            "last_sequence": 223,
            "decision_time_from": "2026-11-27T10:00:00.000Z",
            "decision_time_to": "2026-11-27T11:00:00.000Z",
        },
        "excess": 0.0,
        "severity": "low",
        "signals": 1,
        "last_signal_index": 10,
        "last_signal_sequence": 223,
        "raised_at": "2026-11-27T11:00:00.123Z",
        "entry_sequence": 224,
        "acknowledged_at": None,
        "acknowledged_by": None,
        "disposition": None,
        "note": None,
        "acknowledgement_entry_sequence": None,
    },
)
CALIBRATION_EXAMPLE = OpenApiExample(
    "A calibration",
    value={
        "monitor_id": "mon_01jd...",
        "chart": "over_reliance",
        "odds_ratio": 2.0,
        "arl0_target": 200,
        "runs": 2000,
        "seed": 7,
        "baseline_decisions": 200,
        "h": 2.051,
        "arl0": 200.2,
        "arl0_se": 4.1,
        "arl1_r2": 40.8,
        "arl1_r2_se": 0.6,
        "arl1_r3": 24.7,
        "arl1_r3_se": 0.3,
        "applied": True,
        "entry_sequence": 230,
        "calibrated_at": "2026-11-27T12:00:00.000Z",
    },
)
SERIES_EXAMPLE = OpenApiExample(
    "A series page",
    value={
        "monitor_id": "mon_01jd...",
        "chart": "over_reliance",
        "h": 4.0,
        "data": [
            {
                "index": 10,
                "sequence": 223,
                "decision_id": "loan-4711",
                "user_id": "rev-1",
                "timestamp": "2026-11-27T11:00:00.000Z",
                "ai_confidence": 0.3,
                "event": 1,
                "p": 0.3,
                "w": 0.430783,
                "x": 4.307829,
                "restart": False,
                "signal": True,
                "alarm_id": "alm_01jd...",
            }
        ],
        "pagination": {"page": 1, "limit": 500, "total": 1, "total_pages": 1, "has_more": False},
    },
)
SERIES_PARAMETERS = [
    OpenApiParameter("from_index", int, description="The first index served (default 1)"),
    OpenApiParameter("to_index", int, description="The last index served"),
    OpenApiParameter("page", int, description="Page number, from 1"),
    OpenApiParameter("limit", int, description="Points per page, 1-5,000 (default 500)"),
]


class DriftMonitorViewSet(TenantViewSet[DriftMonitor]):
    # Bodies and answers are pydantic models and plain JSON, not DRF serializers: OPTIONS answers
    # 405 rather than describing a serializer it does not have (it answered 500).
    metadata_class = None
    scopes = {
        "list": Scope.READ,
        "retrieve": Scope.READ,
        "series": Scope.READ,
        "create": Scope.MANAGE,
        "partial_update": Scope.MANAGE,
        "destroy": Scope.MANAGE,
        "calibrate": Scope.MANAGE,
    }
    """POST/GET/PATCH/DELETE /drift-monitors, calibrate and series."""

    pagination_class = PagePagination
    filtersets = {"list": MonitorFilters}

    def get_base_queryset(self) -> QuerySet[DriftMonitor]:
        return DriftMonitor.objects.filter(deleted_at__isnull=True).order_by("-created_at", "-id")

    @extend_schema(responses={200: OBJECT}, examples=[MONITOR_EXAMPLE])
    def list(self, request: Request) -> Response:
        """The customer's monitors not deleted, newest first (docs/reference/drift.md, The API)."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([monitor_json(m) for m in page or []])

    @extend_schema(request=MonitorCreateInput, responses={201: OBJECT}, examples=[MONITOR_EXAMPLE])
    def create(self, request: Request) -> Response:
        """Create a monitor; appends drift_monitor.configured. A `previous` baseline is fitted (and
        with arl0_target calibrated) before it answers."""
        body = body_parse(MonitorCreateInput, request.data)
        monitor = services.monitor_create(customer=self.customer, body=body)
        return Response(monitor_json(monitor), status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: OBJECT}, examples=[MONITOR_EXAMPLE])
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        """One monitor."""
        return Response(monitor_json(self.get_object()))

    @extend_schema(request=MonitorUpdateInput, responses={200: OBJECT})
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        """Change `name`, `enabled` or `h`; a change appends drift_monitor.configured."""
        body = body_parse(MonitorUpdateInput, request.data)
        monitor = services.monitor_update(monitor=self.get_object(), body=body)
        return Response(monitor_json(monitor))

    @extend_schema(request=None, responses={204: None})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Delete the monitor (its alarms stay); appends drift_monitor.configured."""
        services.monitor_delete(monitor=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=CalibrateInput, responses={200: OBJECT}, examples=[CALIBRATION_EXAMPLE])
    @action(detail=True, methods=["post"])
    def calibrate(self, request: Request, pk: str | None = None) -> Response:
        """h from a target ARL0 by a seeded Monte Carlo on the monitor's baseline case mix."""
        body = body_parse(CalibrateInput, request.data if request.data else {})
        return Response(services.monitor_calibrate(monitor=self.get_object(), body=body))

    @extend_schema(
        request=None, responses={200: OBJECT}, examples=[SERIES_EXAMPLE], parameters=SERIES_PARAMETERS
    )
    @action(detail=True, methods=["get"])
    def series(self, request: Request, pk: str | None = None) -> Response:
        """The chart's points in ascending index."""
        monitor = self.get_object()
        params = request.query_params
        limit = positive_int(params.get("limit"), name="limit", default=500, minimum=1, maximum=5000)
        page = positive_int(params.get("page"), name="page", default=1, minimum=1, maximum=None)
        low = positive_int(params.get("from_index"), name="from_index", default=1, minimum=1, maximum=None)
        high = positive_int(
            params.get("to_index"), name="to_index", default=2**31 - 1, minimum=1, maximum=None
        )
        points, total = selectors.series(monitor, low=low, high=high, page=page, limit=limit)
        pages = -(-total // limit) if total else 0
        return Response(
            {
                "monitor_id": monitor.pk,
                "chart": monitor.chart,
                "h": monitor.h,
                "data": [point_json(p, monitor.chart) for p in points],
                "pagination": {
                    "page": page,
                    "limit": limit,
                    "total": total,
                    "total_pages": pages,
                    "has_more": page < pages,
                },
            }
        )


class DriftAlarmViewSet(TenantViewSet[DriftAlarm]):
    # Bodies and answers are pydantic models and plain JSON, not DRF serializers: OPTIONS answers
    # 405 rather than describing a serializer it does not have (it answered 500).
    metadata_class = None
    scopes = {"list": Scope.READ, "retrieve": Scope.READ, "acknowledge": Scope.MANAGE}
    """GET /drift-alarms, GET /drift-alarms/{id}, POST /drift-alarms/{id}/acknowledge."""

    pagination_class = PagePagination
    filtersets = {"list": AlarmFilters}

    def get_base_queryset(self) -> QuerySet[DriftAlarm]:
        return DriftAlarm.objects.order_by("-raised_at", "-id")

    @extend_schema(responses={200: OBJECT}, examples=[ALARM_EXAMPLE])
    def list(self, request: Request) -> Response:
        """The customer's alarms, newest raised_at first."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([alarm_json(a) for a in page or []])

    @extend_schema(responses={200: OBJECT}, examples=[ALARM_EXAMPLE])
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        """One alarm."""
        return Response(alarm_json(self.get_object()))

    @extend_schema(request=AcknowledgeInput, responses={200: OBJECT}, examples=[ALARM_EXAMPLE])
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str | None = None) -> Response:
        """Acknowledge with a disposition (final); appends drift_alarm.acknowledged and restarts the chart."""
        body = body_parse(AcknowledgeInput, request.data)
        key_id = request.user.key.pk  # type: ignore[union-attr]
        alarm = services.alarm_acknowledge(alarm=self.get_object(), body=body, default_by=f"key:{key_id}")
        return Response(alarm_json(alarm))
