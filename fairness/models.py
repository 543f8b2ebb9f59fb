import json

from django.db import models
from django.utils import timezone

from config.ids import new_id
from keys.models import Customer


def _signal_id() -> str:
    return new_id("sig")


def _alert_id() -> str:
    return new_id("amp")


class FairnessSignal(models.Model):
    """A fairness metric reported by an external tool (docs/reference/fairness.md), with its latest
    amplification analysis."""

    id = models.CharField(primary_key=True, max_length=40, default=_signal_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="fairness_signals")
    external_tool_id = models.CharField(max_length=32)
    external_tool_version = models.CharField(max_length=255, null=True, blank=True)
    model_id = models.CharField(max_length=255)
    model_version = models.CharField(max_length=255, null=True, blank=True)
    metric_name = models.CharField(max_length=64)
    metric_value = models.FloatField()
    threshold = models.FloatField(null=True, blank=True)
    passes_threshold = models.BooleanField(null=True, blank=True)
    protected_attribute = models.CharField(max_length=255)
    privileged_group = models.CharField(max_length=255, null=True, blank=True)
    unprivileged_group = models.CharField(max_length=255, null=True, blank=True)
    sample_size = models.BigIntegerField(null=True, blank=True)
    confidence_interval = models.JSONField(null=True, blank=True)
    # The client's JSON text, kept verbatim: PostgreSQL's jsonb would reorder keys, and the
    # raw output of the external tool must read back exactly as it was sent.
    raw_payload_json = models.TextField()
    signal_timestamp = models.DateTimeField()
    ingested_at = models.DateTimeField(default=timezone.now)
    analysis = models.JSONField(default=dict)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "-signal_timestamp"], name="fair_sig_cust_ts"),
            models.Index(fields=["customer", "-ingested_at"], name="fair_sig_cust_ingested"),
            models.Index(fields=["customer", "model_id", "-signal_timestamp"], name="fair_sig_cust_model"),
            models.Index(fields=["-ingested_at"], name="fair_sig_ingested"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.external_tool_id}:{self.metric_name} {self.model_id}"

    @property
    def raw_payload(self) -> object:  # the tool's JSON, kept as sent
        return json.loads(self.raw_payload_json)


class AlertStatus(models.TextChoices):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    FALSE_POSITIVE = "false_positive"


class Severity(models.TextChoices):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class AmplificationAlert(models.Model):
    """Human decisions reinforce the disparity a signal reported (docs/reference/fairness.md, Alerts). One
    per signal."""

    id = models.CharField(primary_key=True, max_length=40, default=_alert_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="amplification_alerts")
    signal = models.OneToOneField(FairnessSignal, on_delete=models.CASCADE, related_name="alert")
    model_id = models.CharField(max_length=255)
    protected_attribute = models.CharField(max_length=255)
    amplification_score = models.FloatField()
    risk_level = models.CharField(max_length=16)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    status = models.CharField(max_length=16, choices=AlertStatus.choices, default=AlertStatus.OPEN)
    analysis = models.JSONField(default=dict)
    resolution_notes = models.TextField(null=True, blank=True)
    resolved_by = models.CharField(max_length=255, null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "-created_at"], name="fair_amp_cust_created"),
            models.Index(fields=["customer", "status", "-created_at"], name="fair_amp_cust_status"),
            models.Index(fields=["status"], name="fair_amp_status"),
            models.Index(fields=["-updated_at"], name="fair_amp_updated"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.severity} {self.status}"


class AlertStatusChange(models.Model):
    """Every status change of an amplification alert: who, when, from, to, notes."""

    alert = models.ForeignKey(AmplificationAlert, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=16)
    to_status = models.CharField(max_length=16)
    by = models.CharField(max_length=255, null=True, blank=True)
    notes = models.TextField(null=True, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["alert", "at"], name="fair_amp_hist_alert")]

    def __str__(self) -> str:
        return f"{self.alert_id}: {self.from_status} -> {self.to_status}"
