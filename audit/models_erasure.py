"""Erasures and the retention policy (docs/reference/erasure.md). Imported by audit.models."""

from django.db import models
from django.utils import timezone

from config.ids import new_id
from keys.models import Customer

MIN_RETENTION_DAYS = 183  # AI Act Art. 19(1), 26(6): logs kept at least six months
ERASED_FINGERPRINT = "erased"  # a replay of an erased decision is a conflict: its payload is gone
PSEUDONYM_PREFIX = "erased:"  # an erased reviewer's pseudonym: this and 8 random hex digits
ERASED = "erased"  # what reports print where an erased personal field was
# The legal bases an erasure names, as reports and the console print them: the grounds of GDPR
# Art. 17(1), the retention policy's maximum (Art. 5(1)(e)), or another.
LEGAL_BASIS_NAMES = {
    "gdpr_art_17_1_a": "GDPR Art. 17(1)(a): no longer necessary",
    "gdpr_art_17_1_b": "GDPR Art. 17(1)(b): consent withdrawn",
    "gdpr_art_17_1_c": "GDPR Art. 17(1)(c): objection to processing",
    "gdpr_art_17_1_d": "GDPR Art. 17(1)(d): unlawfully processed",
    "gdpr_art_17_1_e": "GDPR Art. 17(1)(e): legal obligation to erase",
    "gdpr_art_17_1_f": "GDPR Art. 17(1)(f): a child's data (information society services)",
    "retention_expired": "retention maximum reached (GDPR Art. 5(1)(e))",
    "other": "other",
}


def _erasure_id() -> str:
    return new_id("era")


class Erasure(models.Model):
    """One erasure request and what it did. The erased value itself is kept only while the
    erasure is scheduled (`pending_value`, cleared when it runs); afterwards only a keyed
    digest of it remains, so that the same request again is known as a repeat."""

    class Status(models.TextChoices):
        COMPLETED = "completed"
        SCHEDULED = "scheduled"
        REFUSED = "refused"
        RUNNING = "running"  # on a worker: more entries than a web request erases

    class Target(models.TextChoices):
        SUBJECT_ID = "subject_id"
        USER_ID = "user_id"
        RETENTION = "retention"

    id = models.CharField(primary_key=True, max_length=40, default=_erasure_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="erasures")
    target = models.CharField(max_length=16, choices=Target.choices)
    # HMAC-SHA256 (keyed by the service's secret) of the target and its value: never the value.
    target_digest = models.CharField(max_length=64, blank=True, default="")
    pending_value = models.CharField(max_length=256, null=True, blank=True)
    reason = models.TextField()
    legal_basis = models.CharField(max_length=32)
    override_minimum = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices)
    entries = models.PositiveIntegerField(default=0)
    sequences = models.JSONField(default=list, blank=True)  # [[first, last], ...]
    pseudonym = models.CharField(max_length=24, null=True, blank=True)
    entry_sequence = models.BigIntegerField(null=True, blank=True)  # its (last) `erasure` entry
    # A running erasure's progress: the entries it has erased so far (committed part by part).
    entries_done = models.PositiveIntegerField(default=0)
    # A scheduled request a later erasure of the same person made pointless: that erasure's id.
    covered_by = models.CharField(max_length=40, null=True, blank=True)
    execute_after = models.DateTimeField(null=True, blank=True)
    requested_by = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "created_at"], name="audit_era_cust_created"),
            models.Index(fields=["customer", "target_digest"], name="audit_era_cust_digest"),
            models.Index(
                fields=["execute_after"], name="audit_era_due", condition=models.Q(status="scheduled")
            ),
            models.Index(
                fields=["created_at"], name="audit_era_running", condition=models.Q(status="running")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.status} ({self.customer_id})"


class RetentionPolicy(models.Model):
    """A customer's retention of personal data in the audit trail."""

    customer = models.OneToOneField(
        Customer, on_delete=models.CASCADE, primary_key=True, related_name="retention_policy"
    )
    min_days = models.PositiveIntegerField(default=MIN_RETENTION_DAYS)
    max_days = models.PositiveIntegerField(null=True, blank=True)
    legal_hold = models.BooleanField(default=False)
    # When it last changed (GET /retention-policy's changed_at); null: never changed.
    updated_at = models.DateTimeField(default=timezone.now, null=True)

    def __str__(self) -> str:
        return f"{self.customer_id} {self.min_days}..{self.max_days} hold={self.legal_hold}"
