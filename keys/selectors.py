import datetime as dt
import hmac
from functools import lru_cache
from typing import Any, cast

from django.db import connection
from django.db.models import (
    BooleanField,
    DateTimeField,
    Field,
    IntegerField,
    Model,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from config.db import prepared
from keys.models import AdminAuditLog, ApiKey, ApiKeyUsageDay, Customer
from keys.services import key_digest

# A key's row as the driver gives it: the key's columns, then its customer's.
KeyRow = tuple[object, ...]
# Any: a model's concrete fields, of every value type (django-stubs' Field[set, get])
Fields = list["Field[Any, Any]"]


def _from_row(model: type[Model], fields: Fields, values: KeyRow) -> Model:
    """The row as the model's instance. PostgreSQL's driver already gives aware datetimes and
    booleans; SQLite gives text and integers, converted here."""
    if connection.vendor == "postgresql":
        return model.from_db(connection.alias, _attnames(model), values)
    converted: list[object] = []
    for field, value in zip(fields, values, strict=True):
        if value is not None and isinstance(field, DateTimeField):
            if isinstance(value, str):  # SQLite
                value = parse_datetime(value)
            if isinstance(value, dt.datetime) and timezone.is_naive(value):
                value = value.replace(tzinfo=dt.UTC)
        elif value is not None and isinstance(field, BooleanField):
            value = bool(value)
        converted.append(value)
    return model.from_db(connection.alias, _attnames(model), converted)


@lru_cache(maxsize=4)
def _attnames(model: type[Model]) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields]


@lru_cache(maxsize=1)
def _key_lookup_sql() -> tuple[str, Fields, Fields]:
    key_fields = list(ApiKey._meta.concrete_fields)
    customer_fields = list(Customer._meta.concrete_fields)
    quote = connection.ops.quote_name
    columns = [f"k.{quote(str(f.column))}" for f in key_fields] + [
        f"c.{quote(str(f.column))}" for f in customer_fields
    ]
    sql = (
        f"SELECT {', '.join(columns)} FROM {quote(ApiKey._meta.db_table)} k "  # noqa: S608 - model metadata only
        f"JOIN {quote(Customer._meta.db_table)} c ON c.{quote('id')} = k.{quote('customer_id')} "
        f"WHERE k.{quote('digest')} = %s LIMIT 1"
    )
    return sql, key_fields, customer_fields


def api_key_for_value(*, value: str, digest: str | None = None) -> ApiKey | None:
    """The usable key with this value, or None: one indexed lookup on the digest (a prepared
    SELECT, not the ORM, because it runs on every request), then a constant-time comparison.
    `digest`: the value's key_digest when the caller has it already."""
    digest = digest or key_digest(value)
    row = api_key_row(digest=digest)
    return None if row is None else api_key_from_row(row, digest=digest)


def api_key_row(*, digest: str) -> KeyRow | None:
    """The row of the key with this digest (its fields, then its customer's), or None."""
    sql, _, _ = _key_lookup_sql()
    if connection.vendor == "postgresql":  # prepared once per connection, bound on the server
        with prepared.cursor() as bound:
            bound.execute(sql, [digest])
            row: KeyRow | None = bound.fetchone()
            return row
    with connection.cursor() as cursor:
        cursor.execute(sql, [digest])
        row = cursor.fetchone()
        return row


def api_key_from_row(row: KeyRow, *, digest: str) -> ApiKey | None:
    """A new instance of the row's key if it is usable now and its digest equals `digest`
    (compared in constant time), else None."""
    _, key_fields, customer_fields = _key_lookup_sql()
    split = len(key_fields)
    key = cast(ApiKey, _from_row(ApiKey, key_fields, row[:split]))
    key.customer = cast(Customer, _from_row(Customer, customer_fields, row[split:]))
    if not hmac.compare_digest(key.digest, digest) or not key.is_usable():
        return None
    return key


def api_key_list() -> QuerySet[ApiKey]:
    """Every key, newest first, with its requests over the last 30 days."""
    since = timezone.now().date() - dt.timedelta(days=29)
    usage = (
        ApiKeyUsageDay.objects.filter(key=OuterRef("pk"), day__gte=since)
        .values("key")
        .annotate(total=Sum("count"))
        .values("total")
    )
    return ApiKey.objects.annotate(
        request_count_30d=Coalesce(Subquery(usage, output_field=IntegerField()), Value(0))
    ).order_by("-created_at", "-id")


def api_keys_in_status(rows: QuerySet[ApiKey], status: str) -> QuerySet[ApiKey]:
    """The keys in `status` as a key's answer shows it: a rotated key past its expiry is expired."""
    now = timezone.now()
    if status == "expired":
        return rows.filter(status=ApiKey.Status.ROTATED, expires_at__lte=now)
    if status == ApiKey.Status.ROTATED:
        return rows.filter(status=ApiKey.Status.ROTATED, expires_at__gt=now)
    return rows.filter(status=status)


def admin_audit_log_list() -> QuerySet[AdminAuditLog]:
    return AdminAuditLog.objects.order_by("-created_at", "-id")
