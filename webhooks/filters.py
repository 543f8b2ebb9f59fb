"""The query parameters of GET /v1/webhooks/:id/deliveries (docs/reference/webhooks.md) as a FilterSet."""

from config.filters import QueryFilterSet, choice_filter
from webhooks.events import EVENT_TYPES, TEST_EVENT_TYPE
from webhooks.models import Delivery

DELIVERY_EVENT_TYPES = [*EVENT_TYPES, TEST_EVENT_TYPE]
DELIVERY_STATUSES = [str(s) for s in Delivery.Status.values]


class DeliveryFilters(QueryFilterSet):
    status = choice_filter(choices=DELIVERY_STATUSES, help_text="Only deliveries in this state")
    event_type = choice_filter(choices=DELIVERY_EVENT_TYPES, help_text="Only deliveries of this event")

    class Meta(QueryFilterSet.Meta):
        model = Delivery  # a webhook's rows, not the webhooks the view serves
        fields: list[str] = []
