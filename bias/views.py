"""Thin views of the bias endpoints (C7): validate -> service/selector -> render."""

import datetime as dt

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from bias import selectors, services
from bias.domain import DETECTION_WINDOW_DAYS, is_storable_text, is_valid_attribute_name
from bias.exceptions import InvalidBiasQuery
from bias.models import BiasAlert, BiasType, Severity
from bias.serializers import BiasAlertOutput, DetectBiasInput, DetectBiasOutput, SubgroupReportOutput
from config.api import PagePagination, TenantViewSet, require_object
from config.schema import TrustcalAutoSchema
from config.timeutils import parse_bound, parse_day

ALERT_SEVERITIES = [s.value for s in Severity if s != Severity.NONE]
ATTRIBUTE_HELP = "gender, age_group, ethnicity or custom.<key>"


def _invalid(name: str, message: str) -> InvalidBiasQuery:
    return InvalidBiasQuery(f"{name}: {message}", errors=[{"field": name, "message": message}])


def _choice(request, name: str, choices: list[str]) -> str | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    if value not in choices:
        raise _invalid(name, f"must be one of: {', '.join(choices)}")
    return value


def _attribute(request) -> str | None:
    value = request.query_params.get("attribute")
    if value in (None, ""):
        return None
    if not is_valid_attribute_name(value):
        raise _invalid("attribute", f"must be {ATTRIBUTE_HELP}")
    return value


def _text(request, name: str, max_length: int = 256) -> str | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    if len(value) > max_length:
        raise _invalid(name, f"at most {max_length} characters")
    if not is_storable_text(value):
        raise _invalid(name, "must not contain NUL or unpaired surrogates")
    return value


def _bound(request, name: str, *, end: bool) -> dt.datetime | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    try:
        value = parse_bound(raw, end=end)
    except OverflowError:
        value = None
    if value is None:
        raise _invalid(name, "must be a date (YYYY-MM-DD) or an ISO 8601 timestamp")
    return value


def _day(request, name: str) -> dt.date | None:
    """A from/to of GET /bias/subgroups: a date, or a timestamp taken at day granularity
    (the whole UTC day containing it), because the statistics are daily."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    day = parse_day(raw)
    if day is None:
        raise _invalid(name, "must be a date (YYYY-MM-DD) or an ISO 8601 timestamp")
    return day


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
        created_from = _bound(request, "from", end=False)
        created_to = _bound(request, "to", end=True)
        if created_from and created_to and created_from >= created_to:
            raise _invalid("from", "must be before to")
        qs = selectors.bias_alert_list(
            customer=self.customer,
            severity=_choice(request, "severity", ALERT_SEVERITIES),
            attribute=_attribute(request),
            bias_type=_choice(request, "bias_type", [t.value for t in BiasType]),
            model_id=_text(request, "model_id"),
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
                "from", str, description="Date or timestamp (day granularity); default: 30 days before to"
            ),
            OpenApiParameter(
                "to", str, description="Date or timestamp (day granularity, inclusive); default: today"
            ),
        ],
        responses=SubgroupReportOutput,
    )
    def list(self, request):
        today = timezone.now().date()
        to_day = _day(request, "to") or today
        from_day = _day(request, "from")
        if from_day is None:
            try:
                from_day = to_day - dt.timedelta(days=DETECTION_WINDOW_DAYS)
            except OverflowError:
                from_day = dt.date.min
        if from_day > to_day:
            raise _invalid("from", "must not be after to")
        report = selectors.subgroup_report(
            customer=self.customer,
            attribute=_attribute(request),
            model_id=_text(request, "model_id"),
            from_day=from_day,
            to_day=to_day,
        )
        return Response(SubgroupReportOutput(report).data)
