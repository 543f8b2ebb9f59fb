import datetime as dt
import hmac

from django.db.models import IntegerField, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from keys.models import AdminAuditLog, ApiKey, ApiKeyUsageDay
from keys.services import key_digest


def api_key_for_value(*, value: str) -> ApiKey | None:
    """The usable key with this value, or None. One indexed lookup on the digest, then a
    constant-time comparison of the digests."""
    digest = key_digest(value)
    key = next(iter(ApiKey.objects.select_related("customer").filter(digest=digest)[:1]), None)
    if key is None or not hmac.compare_digest(key.digest, digest) or not key.is_usable():
        return None
    return key


def api_key_list(
    *, customer_id: str | None = None, tier: str | None = None, status: str | None = None
) -> QuerySet[ApiKey]:
    since = timezone.now().date() - dt.timedelta(days=29)
    usage = (
        ApiKeyUsageDay.objects.filter(key=OuterRef("pk"), day__gte=since)
        .values("key")
        .annotate(total=Sum("count"))
        .values("total")
    )
    qs = ApiKey.objects.annotate(
        request_count_30d=Coalesce(Subquery(usage, output_field=IntegerField()), Value(0))
    ).order_by("-created_at", "-id")
    if customer_id:
        qs = qs.filter(customer_id=customer_id)
    if tier:
        qs = qs.filter(tier=tier)
    if status:
        now = timezone.now()
        if status == "expired":
            qs = qs.filter(status=ApiKey.Status.ROTATED, expires_at__lte=now)
        elif status == ApiKey.Status.ROTATED:
            qs = qs.filter(status=ApiKey.Status.ROTATED, expires_at__gt=now)
        else:
            qs = qs.filter(status=status)
    return qs


def admin_audit_log_list() -> QuerySet[AdminAuditLog]:
    return AdminAuditLog.objects.order_by("-created_at", "-id")
