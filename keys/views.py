from typing import cast

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import ID_PATTERN, PagePagination, text_param
from config.bodymodels import body_parse
from config.inputs import header_text
from keys import selectors, services
from keys.authentication import IsAdminKey
from keys.filters import ApiKeyFilters
from keys.inputs import REASON_MAX, ApiKeyCreateInput, ApiKeyRevokeInput
from keys.models import AdminAuditLog, ApiKey
from keys.serializers import (
    AdminAuditLogOutput,
    ApiKeyCreatedOutput,
    ApiKeyOutput,
    ApiKeyRevokedOutput,
    ApiKeyRotatedOutput,
)


def _actor(request: Request) -> services.AdminActor:
    return services.AdminActor(
        key_id=cast(ApiKey, request.auth).id, user=header_text(request, "X-Admin-User", max_length=255)
    )


class ApiKeyAdminViewSet(viewsets.GenericViewSet[ApiKey]):
    """API key administration. Admin keys see every customer's keys: this is the one
    deliberately cross-tenant resource."""

    permission_classes = [IsAdminKey]
    pagination_class = PagePagination
    serializer_class = ApiKeyOutput
    filtersets = {"list": ApiKeyFilters}
    lookup_value_regex = ID_PATTERN

    def get_queryset(self) -> QuerySet[ApiKey]:
        return selectors.api_key_list()

    @extend_schema(responses=ApiKeyOutput(many=True))
    def list(self, request: Request) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(ApiKeyOutput(page, many=True).data)

    @extend_schema(request=ApiKeyCreateInput, responses={201: ApiKeyCreatedOutput})
    def create(self, request: Request) -> Response:
        body = body_parse(ApiKeyCreateInput, request.data)
        issued = services.api_key_create(
            customer_id=body.customer_id,
            tier=body.tier,
            description=body.description,
            is_admin=body.is_admin,
            scopes=body.scopes,
            actor=_actor(request),
        )
        return Response(ApiKeyCreatedOutput(issued).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=ApiKeyOutput)
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        key = get_object_or_404(selectors.api_key_list(), pk=pk)
        return Response(ApiKeyOutput(key).data)

    @extend_schema(
        request=ApiKeyRevokeInput,
        parameters=[
            OpenApiParameter(
                "reason", str, description="Used when the body gives none; at most 500 characters"
            )
        ],
        responses={200: ApiKeyRevokedOutput},
    )
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        key = get_object_or_404(ApiKey, pk=pk)
        data = body_parse(ApiKeyRevokeInput, request.data if request.data else {})
        reason = data.reason or text_param(request, "reason", max_length=REASON_MAX) or ""
        key = services.api_key_revoke(key=key, reason=reason, actor=_actor(request))
        return Response(ApiKeyRevokedOutput(key).data, status=status.HTTP_200_OK)

    @extend_schema(request=None, responses=ApiKeyRotatedOutput)
    @action(detail=True, methods=["post"])
    def rotate(self, request: Request, pk: str | None = None) -> Response:
        key = get_object_or_404(ApiKey, pk=pk)
        issued = services.api_key_rotate(key=key, actor=_actor(request))
        key.refresh_from_db()
        payload = ApiKeyCreatedOutput(issued).data
        payload["previous_key_id"] = key.id
        payload["previous_key_expires_at"] = (
            ApiKeyRotatedOutput().fields["previous_key_expires_at"].to_representation(key.expires_at)
        )
        return Response(payload)


class AdminAuditLogViewSet(viewsets.GenericViewSet[AdminAuditLog]):
    permission_classes = [IsAdminKey]
    pagination_class = PagePagination
    serializer_class = AdminAuditLogOutput

    def get_queryset(self) -> QuerySet[AdminAuditLog]:
        return selectors.admin_audit_log_list()

    @extend_schema(responses=AdminAuditLogOutput(many=True))
    def list(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(AdminAuditLogOutput(page, many=True).data)
