from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import UTCDateTimeField
from webhooks.models import Delivery, Webhook
from webhooks.services import SUBSCRIBABLE


# url and events are taken as any JSON and checked by the service, so that a wrong value
# answers WEBHOOK_INVALID_URL / WEBHOOK_INVALID_EVENT rather than a generic VALIDATION_ERROR.
@extend_schema_field({"type": "string", "format": "uri", "maxLength": 2048})
class UrlField(serializers.JSONField):
    pass


@extend_schema_field({"type": "array", "minItems": 1, "items": {"type": "string", "enum": SUBSCRIBABLE}})
class EventsField(serializers.JSONField):
    pass


class WebhookCreateInput(serializers.Serializer):
    url = UrlField(
        allow_null=True,
        help_text="The receiving HTTPS endpoint; it must resolve to public addresses only (docs/reference/webhooks.md).",
    )
    events = EventsField(allow_null=True, help_text="Event names, or `*` for all.")
    description = serializers.CharField(
        max_length=500, required=False, allow_blank=True, allow_null=True, default=""
    )


class WebhookUpdateInput(serializers.Serializer):
    url = UrlField(required=False, allow_null=True)
    events = EventsField(required=False, allow_null=True)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True, allow_null=True)


class WebhookOutput(serializers.Serializer):
    webhook_id = serializers.CharField(source="id")
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    description = serializers.CharField()
    status = serializers.ChoiceField(choices=Webhook.Status.choices)
    disabled_reason = serializers.CharField(allow_null=True)
    disabled_at = UTCDateTimeField(allow_null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()


class WebhookCreatedOutput(serializers.Serializer):
    """The create answer: the only place besides rotate-secret where the secret appears."""

    webhook_id = serializers.CharField(source="webhook.id")
    url = serializers.CharField(source="webhook.url")
    secret = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField(), source="webhook.events")
    description = serializers.CharField(source="webhook.description")
    status = serializers.ChoiceField(choices=Webhook.Status.choices, source="webhook.status")
    created_at = UTCDateTimeField(source="webhook.created_at")


class WebhookRotatedOutput(serializers.Serializer):
    webhook_id = serializers.CharField(source="webhook.id")
    secret = serializers.CharField()
    previous_secret_expires_at = UTCDateTimeField(source="webhook.previous_secret_expires_at")


class WebhookTestOutput(serializers.Serializer):
    """The answer of a test delivery. 200 when the attempt finished within the wait; 202 with `success`,
    `response_status`, `duration_ms` and `error` null while it is still running (poll the
    delivery in GET /webhooks/:id/deliveries?event_type=webhook.test)."""

    delivery_id = serializers.CharField(source="delivery.id")
    event_id = serializers.CharField(source="event.id")
    success = serializers.BooleanField(allow_null=True)
    response_status = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_null=True)


class DeliveryAttemptOutput(serializers.Serializer):
    attempt = serializers.IntegerField()
    attempted_at = UTCDateTimeField()
    response_status = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)


class DeliveryOutput(serializers.Serializer):
    delivery_id = serializers.CharField(source="id")
    event_id = serializers.CharField()
    event_type = serializers.CharField()
    status = serializers.ChoiceField(choices=Delivery.Status.choices)
    attempt_count = serializers.IntegerField()
    next_attempt_at = UTCDateTimeField(allow_null=True)
    last_response_status = serializers.IntegerField(allow_null=True)
    created_at = UTCDateTimeField()
    attempts = DeliveryAttemptOutput(many=True)
