"""POST /log, GET /audit-trail, GET /audit-trail/:id, GET /audit-trail/verify (C5)."""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import selectors, services
from audit.chain import entry_document
from audit.inputs import parse_decision
from audit.models import AuditEntry
from audit.serializers import AuditEntryOutput, DecisionInput, DecisionOutput, LateOutcomeInput, VerifyOutput
from calibration.rules import RECORD_CATEGORIES
from config.api import PagePagination, TenantViewSet, choice_param, require_object
from config.exceptions import ValidationFailed
from config.timeutils import isoformat, parse_bound

LATE_OUTCOME_KEYS = {"decision_id", "outcome"}


def is_late_outcome(body: dict[str, Any]) -> bool:
    """`{"decision_id", "outcome"}` and nothing else records a later ground truth (C5)."""
    return set(body) == LATE_OUTCOME_KEYS and body.get("outcome") is not None


def decision_payload(result: services.LogResult) -> dict[str, Any]:
    d, entry = result.decision, result.entry
    payload = {
        "decision_id": d.decision_id,
        "user_id": d.user_id,
        "model_id": d.model_id,
        "model_version": d.model_version,
        "ai_recommendation": d.ai_recommendation,
        "ai_confidence": d.ai_confidence,
        "user_decision": d.user_decision,
        "initial_decision": d.initial_decision,
        "outcome": d.outcome,
        "context": d.context,
        "subgroups": d.subgroups,
        "metadata": d.metadata,
        "timestamp": isoformat(d.timestamp),
        "logged_at": isoformat(d.logged_at),
        "followed_ai": d.followed_ai,
        "calibration_category": d.calibration_category,
        "entry_id": entry.id,
        "sequence": entry.sequence,
        "hash": entry.hash,
        "previous_hash": entry.previous_hash,
    }
    return payload


def validated_decision(body: Any) -> dict[str, Any]:
    return parse_decision(require_object(body))


_LOG_REQUEST = PolymorphicProxySerializer(
    component_name="LogRequest",
    serializers=[DecisionInput, LateOutcomeInput],
    resource_type_field_name=None,
)
_LOG_RESPONSE = PolymorphicProxySerializer(
    component_name="LogResponse",
    serializers=[DecisionOutput, AuditEntryOutput],
    resource_type_field_name=None,
)


class LogView(APIView):
    @extend_schema(
        operation_id="log_decision",
        description=(
            "Records one AI-mediated decision (201), or replays a known decision_id with the same payload (200). "
            'A body of exactly {"decision_id", "outcome"} records a later ground truth as an `outcome` entry.'
        ),
        request=_LOG_REQUEST,
        responses={201: _LOG_RESPONSE, 200: _LOG_RESPONSE},
    )
    def post(self, request):
        body = require_object(request.data)
        customer = request.user.customer
        if is_late_outcome(body):
            data = LateOutcomeInput(data=body)
            data.is_valid(raise_exception=True)
            entry, created = services.decision_outcome_record(customer=customer, **data.validated_data)
            return Response(
                entry_document(entry), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
            )
        result = services.decision_log(customer=customer, data=validated_decision(body))
        return Response(
            decision_payload(result), status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        )


def text_param(request, name: str, *, max_length: int = 256) -> str | None:
    """A string query parameter; NUL characters (which PostgreSQL refuses) and overlong
    values are a VALIDATION_ERROR, never a 500."""
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    if "\x00" in value or len(value) > max_length:
        raise ValidationFailed(
            f"{name} must be at most {max_length} characters without NUL.",
            errors=[{"field": name, "message": "invalid value"}],
        )
    return value


def _bound(request, name: str, *, end: bool):
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    value = parse_bound(raw, end=end)
    if value is None:
        raise ValidationFailed(
            f"{name} must be a date (YYYY-MM-DD) or an ISO 8601 timestamp.",
            errors=[{"field": name, "message": "not a date or ISO 8601 timestamp"}],
        )
    return value


class AuditTrailViewSet(TenantViewSet):
    queryset = AuditEntry.objects.all()
    pagination_class = PagePagination
    serializer_class = AuditEntryOutput
    pagination_total: int | None = None

    @extend_schema(
        parameters=[
            OpenApiParameter("user_id", str),
            OpenApiParameter("model_id", str),
            OpenApiParameter("decision_id", str),
            OpenApiParameter("calibration", str, enum=RECORD_CATEGORIES),
            OpenApiParameter(
                "from", str, description="Date (YYYY-MM-DD, inclusive) or ISO 8601; decision timestamp"
            ),
            OpenApiParameter(
                "to", str, description="Date (YYYY-MM-DD, inclusive) or ISO 8601; decision timestamp"
            ),
        ],
        responses=AuditEntryOutput(many=True),
    )
    def list(self, request):
        filters = {
            "user_id": text_param(request, "user_id"),
            "model_id": text_param(request, "model_id"),
            "decision_id": text_param(request, "decision_id"),
            "calibration": choice_param(request, "calibration", RECORD_CATEGORIES),
            "since": _bound(request, "from", end=False),
            "until": _bound(request, "to", end=True),
        }
        qs = selectors.audit_trail_list(self.customer, **filters)
        if all(value is None for value in filters.values()):
            self.pagination_total = selectors.audit_trail_size(self.customer)
        page = self.paginate_queryset(qs)
        return self.get_paginated_response([entry_document(entry) for entry in page])

    @extend_schema(responses=AuditEntryOutput)
    def retrieve(self, request, pk=None):
        return Response(entry_document(self.get_object()))

    @extend_schema(responses=VerifyOutput)
    @action(detail=False, methods=["get"])
    def verify(self, request):
        return Response(selectors.chain_verify(self.customer).as_dict())
