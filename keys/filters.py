"""The query parameters of GET /v1/admin/api-keys (docs/reference/access.md) as a FilterSet."""

from django.db.models import QuerySet

from config.filters import QueryFilterSet, choice_filter, text_filter
from keys import selectors
from keys.models import ApiKey, Customer, Tier

CUSTOMER_ID_MAX = Customer._meta.get_field("id").max_length or 128


class ApiKeyFilters(QueryFilterSet):
    customer_id = text_filter(max_length=CUSTOMER_ID_MAX, help_text="Only the keys of this customer")
    tier = choice_filter(choices=[t.value for t in Tier], help_text="Only keys of this tier")
    status = choice_filter(
        choices={
            "active": "in use",
            "rotated": "replaced by a rotation, still valid until its expires_at",
            "revoked": "revoked",
            "expired": "replaced by a rotation and past its expires_at",
        },
        method="status_narrow",
        help_text="Only keys in this state",
    )

    def status_narrow(self, queryset: QuerySet[ApiKey], name: str, value: str) -> QuerySet[ApiKey]:
        return selectors.api_keys_in_status(queryset, value)
