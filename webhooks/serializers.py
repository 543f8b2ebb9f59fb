from rest_framework import serializers

from config.api import UTCDateTimeField
from webhooks.models import Delivery, DeliveryAttempt, Webhook
from webhooks.selectors import TestResult
from webhooks.services import IssuedWebhook


class WebhookOutput(serializers.Serializer[Webhook]):
    webhook_id = serializers.CharField(source="id")
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    description = serializers.CharField()
    status = serializers.ChoiceField(choices=Webhook.Status.choices)
    disabled_reason = serializers.CharField(allow_null=True)
    disabled_at = UTCDateTimeField(allow_null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()


class WebhookCreatedOutput(serializers.Serializer[IssuedWebhook]):
    """The create answer: the only place besides rotate-secret where the secret appears."""

    webhook_id = serializers.CharField(source="webhook.id")
    url = serializers.CharField(source="webhook.url")
    secret = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField(), source="webhook.events")
    description = serializers.CharField(source="webhook.description")
    status = serializers.ChoiceField(choices=Webhook.Status.choices, source="webhook.status")
    created_at = UTCDateTimeField(source="webhook.created_at")


class WebhookRotatedOutput(serializers.Serializer[IssuedWebhook]):
    webhook_id = serializers.CharField(source="webhook.id")
    secret = serializers.CharField()
    previous_secret_expires_at = UTCDateTimeField(source="webhook.previous_secret_expires_at")


class WebhookTestOutput(serializers.Serializer[TestResult]):
    """The answer of a test delivery. 200 when the attempt finished within the wait; 202 with `success`,
    `response_status`, `duration_ms` and `error` null while it is still running (poll the
    delivery in GET /webhooks/:id/deliveries?event_type=webhook.test)."""

    delivery_id = serializers.CharField(source="delivery.id")
    event_id = serializers.CharField(source="event.id")
    success = serializers.BooleanField(allow_null=True)
    response_status = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_null=True)


class DeliveryAttemptOutput(serializers.Serializer[DeliveryAttempt]):
    attempt = serializers.IntegerField()
    attempted_at = UTCDateTimeField()
    response_status = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)


class DeliveryOutput(serializers.Serializer[Delivery]):
    delivery_id = serializers.CharField(source="id")
    event_id = serializers.CharField()
    event_type = serializers.CharField()
    status = serializers.ChoiceField(choices=Delivery.Status.choices)
    attempt_count = serializers.IntegerField()
    next_attempt_at = UTCDateTimeField(allow_null=True)
    last_response_status = serializers.IntegerField(allow_null=True)
    created_at = UTCDateTimeField()
    attempts = DeliveryAttemptOutput(many=True)
