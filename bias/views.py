"""Thin views of the bias endpoints (docs/reference/bias.md): validate -> service/selector -> render."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from bias import selectors, services
from bias.domain import DETECTION_WINDOW_DAYS, is_valid_attribute_name
from bias.models import BiasAlert, BiasType, Severity
from bias.serializers import BiasAlertOutput, DetectBiasInput, DetectBiasOutput, SubgroupReportOutput
from config.api import PagePagination, TenantViewSet, require_object
from config.inputs import exact_window, invalid, query_choice, query_day_range, query_text, query_time_range
from config.schema import TrustcalAutoSchema

ALERT_SEVERITIES = [s.value for s in Severity if s != Severity.NONE]
ATTRIBUTE_HELP = "gender, age_group, ethnicity or custom.<key>"


def _attribute(request) -> str | None:
    value = query_text(request, "attribute")
    if value is None:
        return None
    if not is_valid_attribute_name(value):
        raise invalid("attribute", f"must be {ATTRIBUTE_HELP}")
    return value


DATE_PARAMS = [
    OpenApiParameter("from", str, description="Date (YYYY-MM-DD, inclusive) or ISO 8601 timestamp"),
    OpenApiParameter("to", str, description="Date (YYYY-MM-DD, inclusive) or ISO 8601 timestamp"),
]


class DetectBiasViewSet(TenantViewSet):
    """POST /detect-bias: attach subgroups to a decision and analyse its model's subgroups."""

    queryset = BiasAlert.objects.all()
    serializer_class = DetectBiasInput
    pagination_class = None

    @extend_schema(request=DetectBiasInput, responses={200: DetectBiasOutput})
    def create(self, request):
        data = DetectBiasInput(data=require_object(request.data))
        data.is_valid(raise_exception=True)
        result = services.bias_detect(customer=self.customer, **data.validated_data)
        return Response(DetectBiasOutput(result).data)


class BiasFeedViewSet(TenantViewSet):
    """GET /bias/feed: the customer's bias alerts, newest first; GET /bias/feed/:id: one."""

    queryset = BiasAlert.objects.all()
    pagination_class = PagePagination
    serializer_class = BiasAlertOutput

    @extend_schema(
        parameters=[
            OpenApiParameter("severity", str, enum=ALERT_SEVERITIES),
            OpenApiParameter("attribute", str, description=ATTRIBUTE_HELP),
            OpenApiParameter("bias_type", str, enum=[t.value for t in BiasType]),
            OpenApiParameter("model_id", str),
            *DATE_PARAMS,
        ],
        responses=BiasAlertOutput(many=True),
    )
    def list(self, request):
        created_from, created_to = query_time_range(request)
        qs = selectors.bias_alert_list(
            self.get_queryset(),
            severity=query_choice(request, "severity", ALERT_SEVERITIES),
            attribute=_attribute(request),
            bias_type=query_choice(request, "bias_type", [t.value for t in BiasType]),
            model_id=query_text(request, "model_id"),
            created_from=created_from,
            created_to=created_to,
        )
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(BiasAlertOutput(page, many=True).data)

    @extend_schema(responses=BiasAlertOutput)
    def retrieve(self, request, pk=None):
        return Response(BiasAlertOutput(get_object_or_404(self.get_queryset(), pk=pk)).data)


class _ReportSchema(TrustcalAutoSchema):
    """GET /bias/subgroups answers one report object, not a list of them."""

    def _is_list_view(self, serializer=None) -> bool:
        return False


class BiasSubgroupsViewSet(TenantViewSet):
    """GET /bias/subgroups: subgroup performance per attribute and group."""

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
    def list(self, request):
        # A bound inside a day is exact: whole days from the daily statistics, the partial
        # edge days from the decisions themselves (docs/reference/bias.md, Subgroup figures).
        exact = exact_window(
            request.query_params.get("from"),
            request.query_params.get("to"),
            default_days=DETECTION_WINDOW_DAYS + 1,
        )
        if exact is not None:
            from_day, to_day = exact[0].date(), exact[1].date()
        else:
            from_day, to_day = query_day_range(request, default_days=DETECTION_WINDOW_DAYS + 1)
        report = selectors.subgroup_report(
            exact=exact,
            customer=self.customer,
            attribute=_attribute(request),
            model_id=query_text(request, "model_id"),
            from_day=from_day,
            to_day=to_day,
        )
        return Response(SubgroupReportOutput(report).data)
