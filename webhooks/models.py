from django.db import models
from django.db.models import Q
from django.utils import timezone

from config.ids import new_id
from keys.models import Customer


def _event_id() -> str:
    return new_id("evt")


def _webhook_id() -> str:
    return new_id("whk")


def _delivery_id() -> str:
    return new_id("dlv")


class Event(models.Model):
    """Every event is stored before delivery (docs/reference/events.md, "Storage before delivery"); the id is the envelope's id and
    idempotency key."""

    id = models.CharField(primary_key=True, max_length=40, default=_event_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=64)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "type", "-created_at"]),
            models.Index(fields=["-created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.type}"


class Webhook(models.Model):
    """A customer's subscription (docs/reference/webhooks.md, "Subscriptions"). `secret` must stay usable for HMAC signing, so it is
    stored as issued; it is never logged, never in __str__/admin, and only shown by create
    and rotate-secret."""

    class Status(models.TextChoices):
        ENABLED = "enabled"
        DISABLED = "disabled"

    id = models.CharField(primary_key=True, max_length=40, default=_webhook_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2048)
    events = models.JSONField(default=list)
    description = models.CharField(max_length=500, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ENABLED)
    disabled_reason = models.CharField(max_length=64, null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    secret = models.CharField(max_length=128, editable=False)
    previous_secret = models.CharField(max_length=128, null=True, blank=True, editable=False)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    # A receiver that keeps timing out is paused for its own deliveries only (the dispatcher
    # skips it until then), doubling per consecutive timeout up to a cap.
    backoff_until = models.DateTimeField(null=True, blank=True)
    consecutive_timeouts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "-created_at"]),
            models.Index(fields=["customer", "status"]),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.url}"

    def subscribes_to(self, event_type: str) -> bool:
        return "*" in self.events or event_type in self.events


class Delivery(models.Model):
    """One event for one webhook: a durable outbox row from the moment the event is recorded.
    The worker claims due rows by setting `claimed_until` (a lease) and `claim_token`; an
    attempt's outcome is written only while the token still matches (docs/reference/webhooks.md,
    "Claims and fencing")."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        SKIPPED = "skipped"

    id = models.CharField(primary_key=True, max_length=40, default=_delivery_id, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    # Denormalised from the event so the history filter is one indexed range.
    event_type = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempt_count = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=32, null=True, blank=True, editable=False)
    last_response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    # Equal to the event's created_at: the per-webhook order in which deliveries start.
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        indexes = [
            # Claiming: only pending rows are in this index, ordered by when they are due.
            models.Index(fields=["next_attempt_at"], name="whk_dlv_due_idx", condition=Q(status="pending")),
            # Per-webhook order gate: the earliest not-yet-started pending delivery.
            models.Index(
                fields=["webhook", "created_at"],
                name="whk_dlv_unstarted_idx",
                condition=Q(status="pending", attempt_count=0),
            ),
            models.Index(fields=["webhook", "-created_at"], name="whk_dlv_history_idx"),
            models.Index(fields=["webhook", "status", "-created_at"], name="whk_dlv_hist_status_idx"),
            models.Index(fields=["webhook", "event_type", "-created_at"], name="whk_dlv_hist_type_idx"),
            models.Index(fields=["status", "completed_at"], name="whk_dlv_status_done_idx"),
            # Which webhooks are being sent to right now (one holder per webhook): only the
            # few claimed rows are in it.
            models.Index(
                fields=["webhook", "claimed_until"],
                name="whk_dlv_claimed_idx",
                condition=Q(status="pending", claimed_until__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.event_type} {self.status}"


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts")
    attempt = models.PositiveSmallIntegerField()
    attempted_at = models.DateTimeField(db_index=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=500, null=True, blank=True)
    response_body = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["delivery", "attempt", "id"]
        indexes = [models.Index(fields=["delivery", "attempt"])]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.attempt}"


class DispatchCounter(models.Model):
    """Platform counters the dispatcher writes and /metrics reads (any process): e.g.
    `internal_errors`, a bug in our own code while sending, which is never a failed attempt."""

    name = models.CharField(primary_key=True, max_length=64)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name}={self.value}"
