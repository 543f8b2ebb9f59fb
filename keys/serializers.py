from rest_framework import serializers

from config.api import UTCDateTimeField
from keys.models import AdminAuditLog, ApiKey
from keys.services import IssuedKey


def _limits(key: ApiKey) -> tuple[int, int]:
    from django.conf import settings

    return settings.TIER_LIMITS[key.tier]


class ApiKeyCreatedOutput(serializers.Serializer[IssuedKey]):
    """The only place a key value is ever shown (create and rotate)."""

    key_id = serializers.CharField(source="key.id")
    api_key = serializers.CharField(source="value")
    customer_id = serializers.CharField(source="key.customer_id")
    tier = serializers.CharField(source="key.tier")
    description = serializers.CharField(source="key.description")
    is_admin = serializers.BooleanField(source="key.is_admin")
    scopes = serializers.ListField(source="key.scope_list", child=serializers.CharField())
    rate_limit = serializers.SerializerMethodField()
    burst = serializers.SerializerMethodField()
    created_at = UTCDateTimeField(source="key.created_at")

    def get_rate_limit(self, obj: IssuedKey) -> int:
        return _limits(obj.key)[0]

    def get_burst(self, obj: IssuedKey) -> int:
        return _limits(obj.key)[1]


class ApiKeyRotatedOutput(ApiKeyCreatedOutput):
    previous_key_id = serializers.CharField()
    previous_key_expires_at = UTCDateTimeField()


class ApiKeyOutput(serializers.ModelSerializer[ApiKey]):
    key_id = serializers.CharField(source="id")
    key_prefix = serializers.CharField(source="prefix")
    customer_id = serializers.CharField()
    rate_limit = serializers.SerializerMethodField()
    burst = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField()
    created_at = UTCDateTimeField()
    last_used = UTCDateTimeField(allow_null=True)
    request_count_30d = serializers.IntegerField(default=0)
    expires_at = UTCDateTimeField(allow_null=True)
    revoked_at = UTCDateTimeField(allow_null=True)
    replaced_by = serializers.CharField(source="replaced_by_id", allow_null=True)
    scopes = serializers.ListField(source="scope_list", child=serializers.CharField())

    class Meta:
        model = ApiKey
        fields = [
            "key_id",
            "key_prefix",
            "customer_id",
            "tier",
            "description",
            "is_admin",
            "scopes",
            "rate_limit",
            "burst",
            "status",
            "created_at",
            "last_used",
            "request_count_30d",
            "expires_at",
            "revoked_at",
            "replaced_by",
        ]

    def get_rate_limit(self, obj: ApiKey) -> int:
        return _limits(obj)[0]

    def get_burst(self, obj: ApiKey) -> int:
        return _limits(obj)[1]

    def get_status(self, obj: ApiKey) -> str:
        return obj.effective_status()


class ApiKeyRevokedOutput(serializers.Serializer[ApiKey]):
    key_id = serializers.CharField(source="id")
    status = serializers.CharField()
    revoked_at = UTCDateTimeField()
    reason = serializers.CharField(source="revoke_reason")


class AdminAuditLogOutput(serializers.ModelSerializer[AdminAuditLog]):
    created_at = UTCDateTimeField()

    class Meta:
        model = AdminAuditLog
        fields = [
            "id",
            "action",
            "key_id",
            "new_key_id",
            "customer_id",
            "tier",
            "admin_key_id",
            "admin_user",
            "reason",
            "created_at",
        ]
