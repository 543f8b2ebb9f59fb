import datetime as dt
import re

from django.db import models
from django.utils import timezone

from config.ids import new_id
from config.scopes import ALL_SCOPES

# A customer id: 1-64 characters of letters, digits and `. _ : -`, but not `.` or `..` (a
# customer id names folders and files of its exports). docs/reference/limits.md, "Customer ids".
CUSTOMER_ID_PATTERN = r"^(?!\.\.?$)[A-Za-z0-9._:-]{1,64}$"
CUSTOMER_ID_HELP = "1 to 64 letters, digits and . _ : - (not . or ..)"


def customer_id_valid(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(CUSTOMER_ID_PATTERN, value) is not None


class Tier(models.TextChoices):
    PILOT = "pilot"
    GROWTH = "growth"
    ENTERPRISE = "enterprise"


class Customer(models.Model):
    """A tenant. Every resource belongs to exactly one customer (docs/reference/access.md, Tenancy)."""

    id = models.CharField(primary_key=True, max_length=128)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.id


def _key_id() -> str:
    return new_id("key")


class ApiKey(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        ROTATED = "rotated"  # still valid until expires_at, then reported as "expired"
        REVOKED = "revoked"

    id = models.CharField(primary_key=True, max_length=40, default=_key_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="api_keys")
    # Only the SHA-256 digest of the key value is stored (docs/reference/access.md, Key format and storage).
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=9, editable=False)
    tier = models.CharField(max_length=16, choices=Tier.choices)
    description = models.CharField(max_length=500, blank=True, default="")
    is_admin = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoke_reason = models.CharField(max_length=500, blank=True, default="")
    replaced_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaces"
    )
    last_used = models.DateTimeField(null=True, blank=True)
    # What the key may do, space-separated in the order of config.scopes.ALL_SCOPES
    # (docs/reference/access.md, Key scopes); keys created before scopes existed hold all three.
    scopes = models.CharField(max_length=64, default=" ".join(ALL_SCOPES))

    class Meta:
        indexes = [models.Index(fields=["customer", "-created_at"]), models.Index(fields=["status", "tier"])]

    def __str__(self) -> str:
        return f"{self.id} ({self.customer_id}, {self.tier})"

    def effective_status(self, now: dt.datetime | None = None) -> str:
        now = now or timezone.now()
        if self.status == self.Status.ROTATED and self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return self.status

    @property
    def scope_list(self) -> list[str]:
        """The key's scopes in the order of config.scopes.ALL_SCOPES."""
        held = set(self.scopes.split())
        return [scope for scope in ALL_SCOPES if scope in held]

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())

    def is_usable(self, now: dt.datetime | None = None) -> bool:
        return self.effective_status(now) in (self.Status.ACTIVE, self.Status.ROTATED)


class ApiKeyUsageDay(models.Model):
    """Requests per key per UTC day, written in batches (never one write per request)."""

    key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="usage_days")
    day = models.DateField()
    count = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "day"], name="keys_usage_one_row_per_day")]

    def __str__(self) -> str:
        return f"{self.key_id} {self.day}: {self.count}"


def _admin_log_id() -> str:
    return new_id("adm")


class AdminAuditLog(models.Model):
    class Action(models.TextChoices):
        CREATED = "api_key.created"
        ROTATED = "api_key.rotated"
        REVOKED = "api_key.revoked"

    id = models.CharField(primary_key=True, max_length=40, default=_admin_log_id, editable=False)
    action = models.CharField(max_length=32, choices=Action.choices)
    key_id = models.CharField(max_length=40)
    new_key_id = models.CharField(max_length=40, null=True, blank=True)
    customer_id = models.CharField(max_length=128)
    tier = models.CharField(max_length=16)
    admin_key_id = models.CharField(max_length=40, null=True, blank=True)
    admin_user = models.CharField(max_length=255, null=True, blank=True)
    reason = models.CharField(max_length=500, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "admin audit log entry"
        verbose_name_plural = "admin audit log"

    def __str__(self) -> str:
        return f"{self.action} {self.key_id}"
