"""Signed checkpoints, proofs and the NDJSON export of the audit trail
(docs/reference/checkpoints.md): /audit-trail/checkpoints, /checkpoints/latest,
/checkpoint-key (public), /proofs/inclusion, /proofs/consistency, /export."""

import base64
import datetime as dt
import json
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import checkpoint_key, checkpoints, selectors, tree
from audit.export import entries_ndjson
from audit.models import SignedCheckpoint
from config.api import PagePagination, TenantAPIView
from config.exceptions import NotFound, ValidationFailed
from config.inputs import bound, parse_day_only, positive_int
from config.jsondoc import JSONObject
from config.scopes import Scope
from config.timeutils import isoformat
from keys.models import Customer


class CheckpointOutput(serializers.Serializer[SignedCheckpoint]):
    checkpoint_id = serializers.CharField(source="id")
    sequence = serializers.IntegerField()
    head_hash = serializers.CharField()
    root_hash = serializers.CharField(help_text="The Merkle tree hash at `sequence`, hex")
    created_at = serializers.SerializerMethodField()
    note = serializers.CharField(help_text="The signed note (C2SP signed-note, tlog-checkpoint body)")

    def get_created_at(self, obj: SignedCheckpoint) -> str:
        return isoformat(obj.created_at) or ""


# a checkpoint's document by name, rendered as JSON
def checkpoint_payload(checkpoint: SignedCheckpoint) -> JSONObject:
    return dict(CheckpointOutput(checkpoint).data)


def _wants_text(request: Request) -> bool:
    accept = request.headers.get("Accept", "")
    return "text/plain" in accept and "application/json" not in accept


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _int_param(request: Request, name: str, *, maximum: int | None = None) -> int:
    """A required positive integer query parameter."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        raise ValidationFailed(f"{name} is required.", errors=[{"field": name, "message": "is required"}])
    return positive_int(raw, name=name, default=0, minimum=1, maximum=maximum)


def _optional_int_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    return None if raw in (None, "") else positive_int(raw, name=name, default=0, minimum=1, maximum=None)


def _instant(raw: str, name: str) -> dt.datetime:
    """A point in time: a timestamp as given, or a date for the last instant of its UTC day."""
    end = bound(raw, name, end=True)
    return end - dt.timedelta(microseconds=1) if parse_day_only(raw) else end


def _tree_size(customer: Customer) -> int:
    return selectors.audit_trail_size(customer)


class CheckpointListView(TenantAPIView):
    scopes = {"get": Scope.READ, "post": Scope.MANAGE}
    pagination_class = PagePagination

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "at",
                str,
                description="Only checkpoints made at or before this time (a timestamp, or a date for "
                "the end of that UTC day): the first one listed is the last checkpoint at that time.",
            )
        ],
        responses=CheckpointOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        """The customer's signed checkpoints, newest first; `at` lists those made at or before it."""
        raw = request.query_params.get("at")
        until = None if raw is None else _instant(raw, "at")
        paginator = PagePagination()
        page = paginator.paginate_queryset(
            checkpoints.checkpoints_list(customer=self.customer, until=until), request, self
        )
        return paginator.get_paginated_response([checkpoint_payload(c) for c in page or []])

    @extend_schema(request=None, responses={201: CheckpointOutput, 200: CheckpointOutput})
    def post(self, request: Request) -> Response:
        """A checkpoint of the chain now (201), or the latest when the chain has not grown
        since (200). An empty chain has none: 404 NOT_FOUND. Within TRUSTCAL_CHECKPOINT_MIN_SECONDS
        of the newest: 429 RATE_LIMIT_EXCEEDED with Retry-After."""
        made = checkpoints.checkpoint_make(customer=self.customer, requested=True)
        if made.checkpoint is None:
            raise NotFound("The audit trail is empty: there is nothing to checkpoint yet.")
        code = status.HTTP_201_CREATED if made.created else status.HTTP_200_OK
        return Response(checkpoint_payload(made.checkpoint), status=code)


class NoteRenderer(BaseRenderer):
    """`Accept: text/plain` on /checkpoints/latest: the signed note as it was signed."""

    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    # Any: DRF's renderer signature: any data, any context
    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        if isinstance(data, str):
            return data.encode("utf-8")
        return json.dumps(data, ensure_ascii=False).encode("utf-8")


class CheckpointLatestView(TenantAPIView):
    scopes = {"get": Scope.READ}
    renderer_classes = [JSONRenderer, NoteRenderer]

    @extend_schema(
        responses={(200, "application/json"): CheckpointOutput, (200, "text/plain"): OpenApiTypes.STR}
    )
    def get(self, request: Request) -> Response:
        """The newest checkpoint; `Accept: text/plain` answers the signed note alone."""
        latest = checkpoints.checkpoint_latest(customer=self.customer)
        if latest is None:
            raise NotFound("No checkpoint has been made for this audit trail yet.")
        if _wants_text(request):
            return Response(latest.note, content_type="text/plain; charset=utf-8")
        return Response(checkpoint_payload(latest))


class CheckpointKeyView(APIView):
    """Public: the key that verifies every checkpoint of this service."""

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes = [AllowAny]

    @extend_schema(
        responses=inline_serializer(
            "CheckpointKey",
            {
                "origin": serializers.CharField(),
                "algorithm": serializers.CharField(),
                "public_key": serializers.CharField(),
                "verifier_key": serializers.CharField(),
            },
        )
    )
    def get(self, request: Request) -> Response:
        return Response(
            {
                "origin": checkpoint_key.key_name(),
                "algorithm": "ed25519",
                "public_key": _b64(checkpoint_key.public_key()),
                "verifier_key": checkpoint_key.verifier_key(),
            }
        )


class InclusionProofView(TenantAPIView):
    scopes = {"get": Scope.READ}

    @extend_schema(
        parameters=[
            OpenApiParameter("sequence", int, required=True),
            OpenApiParameter("tree_size", int, required=True),
        ],
        responses=inline_serializer(
            "InclusionProof",
            {
                "sequence": serializers.IntegerField(),
                "leaf_index": serializers.IntegerField(),
                "tree_size": serializers.IntegerField(),
                "leaf_hash": serializers.CharField(),
                "hashes": serializers.ListField(child=serializers.CharField()),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        """The RFC 9162 inclusion path of entry `sequence` in the tree of `tree_size` entries."""
        size = _tree_size(self.customer)
        tree_size = _int_param(request, "tree_size", maximum=max(size, 1))
        sequence = _int_param(request, "sequence", maximum=tree_size)
        if tree_size > size:
            raise ValidationFailed("tree_size is beyond the audit trail's size.")
        leaf, hashes = tree.inclusion(self.customer.pk, sequence - 1, tree_size)
        return Response(
            {
                "sequence": sequence,
                "leaf_index": sequence - 1,
                "tree_size": tree_size,
                "leaf_hash": _b64(leaf),
                "hashes": [_b64(h) for h in hashes],
            }
        )


class ConsistencyProofView(TenantAPIView):
    scopes = {"get": Scope.READ}

    @extend_schema(
        parameters=[
            OpenApiParameter("first", int, required=True),
            OpenApiParameter("second", int, required=True),
        ],
        responses=inline_serializer(
            "ConsistencyProof",
            {
                "first": serializers.IntegerField(),
                "second": serializers.IntegerField(),
                "hashes": serializers.ListField(child=serializers.CharField()),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        """The RFC 9162 consistency proof from the tree of `first` entries to that of `second`."""
        size = _tree_size(self.customer)
        second = _int_param(request, "second", maximum=max(size, 1))
        first = _int_param(request, "first", maximum=second)
        if second > size:
            raise ValidationFailed("second is beyond the audit trail's size.")
        hashes = tree.consistency_proof(self.customer.pk, first, second)
        return Response({"first": first, "second": second, "hashes": [_b64(h) for h in hashes]})


class ExportView(TenantAPIView):
    scopes = {"get": Scope.READ}

    @extend_schema(
        parameters=[OpenApiParameter("from_sequence", int), OpenApiParameter("to_sequence", int)],
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        """Every entry as one JSON line (exactly as GET /audit-trail shows it), in sequence
        order, streamed: recompute the chain and the tree from line 1 with the offline
        verifier (README, "For auditors")."""
        first = _optional_int_param(request, "from_sequence") or 1
        last = _optional_int_param(request, "to_sequence")
        if last is not None and last < first:
            raise ValidationFailed(
                "to_sequence must not be before from_sequence.",
                errors=[{"field": "to_sequence", "message": "must be at least from_sequence"}],
            )
        response = StreamingHttpResponse(
            entries_ndjson(self.customer.pk, first, last), content_type="application/x-ndjson; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="audit-trail-{self.customer.pk}.ndjson"'
        return response
