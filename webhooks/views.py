from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import PagePagination, TenantViewSet
from config.bodymodels import body_parse
from config.filters import filtered
from config.scopes import Scope
from webhooks import selectors, services
from webhooks.filters import DeliveryFilters
from webhooks.inputs import WebhookCreateInput, WebhookUpdateInput
from webhooks.models import Webhook
from webhooks.serializers import (
    DeliveryOutput,
    WebhookCreatedOutput,
    WebhookOutput,
    WebhookRotatedOutput,
    WebhookTestOutput,
)


class WebhookViewSet(TenantViewSet[Webhook]):
    """Webhook subscriptions of the caller's customer; another customer's id is a 404."""

    scopes = {
        "list": Scope.READ,
        "create": Scope.MANAGE,
        "retrieve": Scope.READ,
        "partial_update": Scope.MANAGE,
        "destroy": Scope.MANAGE,
        "test": Scope.MANAGE,
        "rotate_secret": Scope.MANAGE,
        "enable": Scope.MANAGE,
        "deliveries": Scope.READ,
    }

    queryset = Webhook.objects.all()
    pagination_class = PagePagination
    serializer_class = WebhookOutput
    filtersets = {"deliveries": DeliveryFilters}

    def get_base_queryset(self) -> QuerySet[Webhook]:
        return Webhook.objects.order_by("-created_at", "-id")

    @extend_schema(responses=WebhookOutput(many=True))
    def list(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([WebhookOutput(webhook).data for webhook in page or []])

    @extend_schema(request=WebhookCreateInput, responses={201: WebhookCreatedOutput})
    def create(self, request: Request) -> Response:
        body = body_parse(WebhookCreateInput, request.data)
        issued = services.webhook_create(
            customer=self.customer, url=body.url, events=body.events, description=body.description
        )
        return Response(WebhookCreatedOutput(issued).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=WebhookOutput)
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        return Response(WebhookOutput(self.get_object()).data)

    @extend_schema(request=WebhookUpdateInput, responses=WebhookOutput)
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        webhook = self.get_object()
        webhook = services.webhook_update(
            webhook=webhook, changes=body_parse(WebhookUpdateInput, request.data)
        )
        return Response(WebhookOutput(webhook).data)

    @extend_schema(request=None, responses={204: None})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        services.webhook_delete(webhook=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={200: WebhookTestOutput, 202: WebhookTestOutput})
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str | None = None) -> Response:
        """One signed attempt of a `webhook.test` event, run by a worker. 200 with the outcome
        when it is known within a few seconds; else 202 with `success: null` (poll the delivery)."""
        delivery = services.webhook_test_start(webhook=self.get_object())
        result = selectors.webhook_test_wait(delivery_id=delivery.pk)
        code = status.HTTP_200_OK if result.success is not None else status.HTTP_202_ACCEPTED
        return Response(WebhookTestOutput(result).data, status=code)

    @extend_schema(request=None, responses=WebhookRotatedOutput)
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, pk: str | None = None) -> Response:
        issued = services.webhook_secret_rotate(webhook=self.get_object())
        return Response(WebhookRotatedOutput(issued).data)

    @extend_schema(request=None, responses=WebhookOutput)
    @action(detail=True, methods=["post"])
    def enable(self, request: Request, pk: str | None = None) -> Response:
        webhook = services.webhook_enable(webhook=self.get_object())
        return Response(WebhookOutput(webhook).data)

    @extend_schema(responses=DeliveryOutput(many=True))
    @action(detail=True, methods=["get"])
    def deliveries(self, request: Request, pk: str | None = None) -> Response:
        webhook = self.get_object()
        qs = filtered(request, selectors.delivery_list(webhook=webhook), self)
        page = self.paginate_queryset(qs)
        return self.get_paginated_response([DeliveryOutput(delivery).data for delivery in page or []])
