"""Thin views of the bias endpoints (docs/reference/bias.md): validate -> service/selector -> render."""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from bias import selectors, services
from bias.domain import DETECTION_WINDOW_DAYS
from bias.filters import ATTRIBUTE_HELP, BiasFeedFilters, attribute_name
from bias.inputs import DetectBiasInput
from bias.models import BiasAlert
from bias.serializers import BiasAlertOutput, DetectBiasOutput, SubgroupReportOutput
from config.api import PagePagination, TenantViewSet
from config.bodymodels import body_parse
from config.inputs import query_day_window, query_text
from config.schema import TrustcalAutoSchema
from config.scopes import Scope


class DetectBiasViewSet(TenantViewSet[Any]):  # Any: its serializer shows a detection, not the model
    """POST /detect-bias: attach subgroups to a decision and analyse its model's subgroups."""

    scopes = {"create": Scope.INGEST}

    queryset = BiasAlert.objects.all()
    serializer_class = DetectBiasOutput
    pagination_class = None

    @extend_schema(request=DetectBiasInput, responses={200: DetectBiasOutput})
    def create(self, request: Request) -> Response:
        body = body_parse(DetectBiasInput, request.data)
        result = services.bias_detect(
            customer=self.customer, decision_id=body.decision_id, attributes=body.attributes()
        )
        return Response(DetectBiasOutput(result).data)


class BiasFeedViewSet(TenantViewSet[BiasAlert]):
    """GET /bias/feed: the customer's bias alerts, newest first; GET /bias/feed/:id: one."""

    scopes = {"list": Scope.READ, "retrieve": Scope.READ}

    queryset = BiasAlert.objects.all()
    pagination_class = PagePagination
    serializer_class = BiasAlertOutput
    filtersets = {"list": BiasFeedFilters}

    @extend_schema(responses=BiasAlertOutput(many=True))
    def list(self, request: Request) -> Response:
        qs = selectors.bias_alert_list(self.filter_queryset(self.get_queryset()))
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(BiasAlertOutput(page, many=True).data)

    @extend_schema(responses=BiasAlertOutput)
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        return Response(BiasAlertOutput(get_object_or_404(self.get_queryset(), pk=pk)).data)


class _ReportSchema(TrustcalAutoSchema):
    """GET /bias/subgroups answers one report object, not a list of them."""

    def _is_list_view(self, serializer: object | None = None) -> bool:
        return False


class BiasSubgroupsViewSet(TenantViewSet[Any]):  # Any: its serializer shows a report, not the model
    """GET /bias/subgroups: subgroup performance per attribute and group."""

    scopes = {"list": Scope.READ}

    schema = _ReportSchema()
    queryset = BiasAlert.objects.all()
    serializer_class = SubgroupReportOutput
    pagination_class = None

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "attribute", str, description=ATTRIBUTE_HELP + "; default: every attribute present"
            ),
            OpenApiParameter("model_id", str, description="default: all models"),
            OpenApiParameter(
                "from",
                str,
                description="Date (inclusive) or an exact ISO 8601 timestamp; default: 30 days before to",
            ),
            OpenApiParameter(
                "to",
                str,
                description="Date (inclusive) or an exact ISO 8601 timestamp (exclusive); default: today",
            ),
        ],
        responses=SubgroupReportOutput,
    )
    def list(self, request: Request) -> Response:
        # A bound inside a day is exact: whole days from the daily statistics, the partial
        # edge days from the decisions themselves (docs/reference/bias.md, Subgroup figures).
        span = query_day_window(request, default_days=DETECTION_WINDOW_DAYS + 1)
        exact, (from_day, to_day) = span.exact, span.days
        report = selectors.subgroup_report(
            exact=exact,
            customer=self.customer,
            attribute=attribute_name(request.query_params.get("attribute")),
            model_id=query_text(request, "model_id"),
            from_day=from_day,
            to_day=to_day,
        )
        return Response(SubgroupReportOutput(report).data)
