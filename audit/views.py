"""POST /log, GET /audit-trail, GET /audit-trail/:id, GET /audit-trail/verify (docs/reference/decisions.md)."""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from audit import selectors, services
from audit import verify as chain_verify
from audit.chain import entry_document
from audit.fields import DECISION_OUTPUT_FIELDS
from audit.filters import AuditTrailFilters
from audit.inputs import DecisionInput, LateOutcomeInput, LogBatchInput, item_validated
from audit.models import AuditEntry
from audit.serializers import (
    AuditEntryFormat2Output,
    AuditEntryOutput,
    DecisionOutput,
    VerifyJobOutput,
    VerifyOutput,
)
from config.api import PagePagination, TenantAPIView, TenantViewSet, choice_param, require_object, text_param
from config.bodymodels import body_parse
from config.gcpause import collector_paused
from config.jsondoc import JSONObject
from config.jsonwalk import check_document
from config.parsers import LargeJSONParser, NDJSONParser
from config.scopes import Scope
from config.timeutils import isoformat

_FROM_ENTRY = {"entry_id": "id", "sequence": "sequence", "hash": "hash", "previous_hash": "previous_hash"}


# the decision's document by name, rendered as JSON
def decision_payload(result: services.LogResult) -> JSONObject:
    """The body of a logged (or replayed) decision: DecisionOutput's fields, built directly
    (this is the hot path of POST /log)."""
    d, entry = result.decision, result.entry
    payload: dict[str, object] = {}
    for name in DECISION_OUTPUT_FIELDS:
        if name in _FROM_ENTRY:
            payload[name] = getattr(entry, _FROM_ENTRY[name])
        elif name in ("timestamp", "logged_at", "review_started_at"):
            payload[name] = isoformat(getattr(d, name))
        else:
            payload[name] = getattr(d, name)
    return payload


_LOG_REQUEST = PolymorphicProxySerializer(
    component_name="LogRequest",
    # drf-spectacular's pydantic extension documents the models; the stubs know serializers only
    serializers=[DecisionInput, LateOutcomeInput],  # type: ignore[list-item]
    resource_type_field_name=None,
)
_LOG_RESPONSE = PolymorphicProxySerializer(
    component_name="LogResponse",
    serializers=[DecisionOutput, AuditEntryFormat2Output],
    resource_type_field_name=None,
)
_VERIFY_RESPONSE = PolymorphicProxySerializer(
    component_name="VerifyResponse",
    serializers=[VerifyOutput, VerifyJobOutput],
    resource_type_field_name=None,
)


class LogView(TenantAPIView):
    scopes = {"post": Scope.INGEST}

    @extend_schema(
        operation_id="log_decision",
        description=(
            "Records one AI-mediated decision (201), or replays a known decision_id with the same payload (200). "
            'A body of exactly {"decision_id", "outcome"} records a later ground truth as an `outcome` entry.'
        ),
        request=_LOG_REQUEST,
        responses={201: _LOG_RESPONSE, 200: _LOG_RESPONSE},
    )
    def post(self, request: Request) -> Response:
        item = item_validated(request.data)
        customer = self.customer
        if isinstance(item.data, LateOutcomeInput):
            entry, created = services.decision_outcome_record(
                customer=customer, decision_id=item.data.decision_id, outcome=item.data.outcome
            )
            return Response(
                entry_document(entry), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
            )
        result = services.decision_log(customer=customer, data=item.data)
        return Response(
            decision_payload(result), status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        )


class LogBatchItemOutput(serializers.Serializer[dict[str, object]]):
    index = serializers.IntegerField()
    status = serializers.IntegerField(help_text="201 stored, 200 replayed, 400/404/409 rejected")
    decision_id = serializers.CharField(allow_null=True)
    entry_id = serializers.CharField(required=False)
    sequence = serializers.IntegerField(required=False)
    calibration_category = serializers.CharField(required=False)
    error = serializers.DictField(required=False, help_text="code, title, detail, errors")


class LogBatchOutput(serializers.Serializer[dict[str, object]]):
    accepted = serializers.IntegerField()
    replayed = serializers.IntegerField()
    rejected = serializers.IntegerField()
    results = LogBatchItemOutput(many=True)


def batch_items(body: object) -> list[dict[str, object]]:
    """The `decisions` array of a batch, or VALIDATION_ERROR for the whole request. The items'
    strings are checked item by item by the service; the rest of the envelope here."""
    body = require_object(body)
    check_document({key: value for key, value in body.items() if key != "decisions"})
    return body_parse(LogBatchInput, body).decisions


# the batch's document by name, rendered as JSON
def batch_payload(result: services.BatchResult) -> JSONObject:
    rows: list[dict[str, object]] = []
    for item in result.items:
        row: dict[str, object] = {"index": item.index, "status": item.status, "decision_id": item.decision_id}
        if item.error is not None:
            error = item.error
            row["error"] = {
                "code": error.code,
                "title": error.title,
                "detail": error.detail,
                "errors": error.errors,
            }
        elif item.entry is not None:
            row["entry_id"] = item.entry.id
            row["sequence"] = item.entry.sequence
            row["calibration_category"] = item.entry.calibration_category
        rows.append(row)
    return {
        "accepted": result.accepted,
        "replayed": result.replayed,
        "rejected": result.rejected,
        "results": rows,
    }


class LogBatchView(TenantAPIView):
    scopes = {"post": Scope.INGEST}
    parser_classes = [LargeJSONParser, NDJSONParser]

    @extend_schema(
        operation_id="log_decision_batch",
        description=(
            'Up to 1,000 POST /log bodies in one request (`{"decisions": [...]}`, or '
            "`application/x-ndjson` with one body per line; bodies up to 8 MiB). Each item has exactly the "
            "effects of the same POST /log call, in input order; all valid items are committed together. "
            "200 with one result per item: status 201 (stored), 200 (replayed), or 400/404/409 with the "
            "error POST /log would have answered. Counts as one request against the rate limit."
        ),
        request={"application/json": LogBatchInput, "application/x-ndjson": LogBatchInput},
        responses={200: LogBatchOutput},
    )
    def post(self, request: Request) -> Response:
        with collector_paused():  # the batch's rows are freed by reference counting (config.gcpause)
            result = services.decisions_log_batch(customer=self.customer, items=batch_items(request.data))
            return Response(batch_payload(result))


class AuditTrailViewSet(TenantViewSet[Any]):  # Any: its serializer shows entry documents, not the model
    scopes = {"list": Scope.READ, "retrieve": Scope.READ, "verify": Scope.READ}
    queryset = AuditEntry.objects.all()
    pagination_class = PagePagination
    serializer_class = AuditEntryOutput
    filtersets = {"list": AuditTrailFilters}
    pagination_total: int | None = None

    @extend_schema(responses=AuditEntryFormat2Output(many=True))
    def list(self, request: Request) -> Response:
        qs = selectors.audit_trail_list(self.filter_queryset(self.get_queryset()))
        if not any(request.query_params.get(name) for name in AuditTrailFilters.base_filters):
            self.pagination_total = selectors.audit_trail_size(self.customer)
        page = self.paginate_queryset(qs)
        return self.get_paginated_response([entry_document(entry) for entry in page or []])

    @extend_schema(responses=AuditEntryFormat2Output)
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        return Response(entry_document(self.get_object()))

    @extend_schema(
        parameters=[
            OpenApiParameter("full", bool, description="Recheck the whole chain as a job (202 with the job)"),
            OpenApiParameter("job_id", str, description="A full recheck's job (vfy_...), to poll"),
        ],
        responses={200: _VERIFY_RESPONSE, 202: VerifyJobOutput},
    )
    @action(detail=False, methods=["get"])
    def verify(self, request: Request) -> Response:
        """Checks the chain and its signed checkpoints from the point an earlier check
        reached: a call reads only the entries appended since. `X-Verified-From-Sequence` says
        after which sequence entries were rechecked by this call; `entries_checked` and
        `checkpoints_checked` count the whole chain verified so far. A check that finds
        anything invalid clears that point, so later calls recheck everything;
        `?full=true` rechecks everything as a job."""
        job_id = text_param(request, "job_id")
        if job_id:
            job = chain_verify.verify_job_get(customer=self.customer, job_id=job_id)
            return Response(VerifyJobOutput(job).data)
        if choice_param(request, "full", ["true", "false"], default="false") == "true":
            job = chain_verify.verify_job_start(customer=self.customer)
            return Response(VerifyJobOutput(job).data, status=status.HTTP_202_ACCEPTED)
        result, start = chain_verify.chain_verify_incremental(self.customer)
        return Response(result.as_dict(), headers={"X-Verified-From-Sequence": str(start)})
