"""Fairness signals and amplification alerts over HTTP (docs/reference/fairness.md). Thin: parse, call,
render."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status as http_status
from rest_framework.decorators import action
from rest_framework.response import Response

from config.api import (
    ID_PATTERN,
    CamelPagePagination,
    TenantViewSet,
)
from config.bodymodels import body_parse
from config.scopes import Scope
from fairness import selectors, services
from fairness.filters import AlertFilters, SignalFilters
from fairness.inputs import AlertPatchInput, SignalInput
from fairness.models import AmplificationAlert, FairnessSignal
from fairness.serializers import (
    AlertDetailOutput,
    AlertOutput,
    AnalyzeOutput,
    SignalOutput,
)


class FairnessSignalViewSet(TenantViewSet[FairnessSignal]):
    scopes = {"create": Scope.INGEST, "list": Scope.READ, "retrieve": Scope.READ}
    queryset = FairnessSignal.objects.all()
    pagination_class = CamelPagePagination
    serializer_class = SignalOutput
    filtersets = {"list": SignalFilters}
    lookup_value_regex = ID_PATTERN

    def get_base_queryset(self):
        return FairnessSignal.objects.select_related("alert")

    @extend_schema(
        operation_id="model_fairness_signals_create",
        request=SignalInput,
        responses={201: SignalOutput},
        description="Ingest a signal. Checked in order: externalToolId (FAIRNESS_INVALID_SOURCE), metricName "
        "(FAIRNESS_INVALID_METRIC), other fields (VALIDATION_ERROR), signalTimestamp (SIGNAL_IN_FUTURE, "
        "SIGNAL_TOO_OLD), then 100 accepted per sliding hour per customer (FAIRNESS_RATE_LIMIT).",
    )
    def create(self, request):
        data = body_parse(SignalInput, request.data)
        result = services.signal_ingest(customer=self.customer, data=data)
        return Response(SignalOutput(result.signal).data, status=http_status.HTTP_201_CREATED)

    @extend_schema(operation_id="model_fairness_signals_list", responses=SignalOutput(many=True))
    def list(self, request):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(SignalOutput(page, many=True).data)

    @extend_schema(operation_id="model_fairness_signals_retrieve", responses=SignalOutput)
    def retrieve(self, request, pk=None):
        return Response(SignalOutput(self.get_object()).data)


class AmplificationAlertViewSet(TenantViewSet[AmplificationAlert]):
    scopes = {
        "list": Scope.READ,
        "retrieve": Scope.READ,
        "partial_update": Scope.MANAGE,
        "analyze": Scope.INGEST,
    }
    queryset = AmplificationAlert.objects.all()
    pagination_class = CamelPagePagination
    serializer_class = AlertOutput
    filtersets = {"list": AlertFilters}
    lookup_value_regex = ID_PATTERN

    def get_base_queryset(self):
        if self.action == "retrieve":
            return AmplificationAlert.objects.select_related("signal").prefetch_related("status_changes")
        return AmplificationAlert.objects.all()

    @extend_schema(operation_id="bias_amplification_list", responses=AlertOutput(many=True))
    def list(self, request):
        qs = selectors.alert_list(self.filter_queryset(self.get_queryset()))
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(AlertOutput(page, many=True).data)

    @extend_schema(operation_id="bias_amplification_retrieve", responses=AlertDetailOutput)
    def retrieve(self, request, pk=None):
        return Response(AlertDetailOutput(self.get_object()).data)

    @extend_schema(
        operation_id="bias_amplification_partial_update",
        request=AlertPatchInput,
        responses=AlertOutput,
    )
    def partial_update(self, request, pk=None):
        alert = self.get_object()
        body = body_parse(AlertPatchInput, request.data)
        alert = services.alert_status_update(
            alert=alert,
            actor=f"api_key:{request.auth.id}",
            status=body.status,
            resolution_notes=body.resolution_notes,
            resolved_by=body.resolved_by,
        )
        return Response(AlertOutput(alert).data)

    @extend_schema(
        operation_id="bias_amplification_analyze",
        request=None,
        responses=AnalyzeOutput,
        parameters=[OpenApiParameter("signalId", str, location=OpenApiParameter.PATH)],
        description="Run the amplification analysis of one signal now (10 per sliding minute per customer, "
        "AMPLIFICATION_RATE_LIMIT).",
    )
    @action(detail=False, methods=["post"], url_path=rf"analyze/(?P<signalId>{ID_PATTERN})")
    def analyze(self, request, signalId=None):
        signal = get_object_or_404(
            FairnessSignal.objects.select_related("customer"), pk=signalId, customer=self.customer
        )
        result = services.signal_analyze(customer=self.customer, signal=signal)
        return Response(
            {
                "signalId": signal.id,
                "analysis": result.analysis,
                "alert": AlertOutput(result.alert).data if result.alert else None,
            }
        )
