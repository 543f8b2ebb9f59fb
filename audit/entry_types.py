"""The types of a customer's audit-trail entries (AuditEntry.type). Other apps that append
entries (drift) name their types here, so the API schema's enum lists every type served."""

from django.db import models


class EntryType(models.TextChoices):
    DECISION = "decision"
    OUTCOME = "outcome"
    # The decision with the subgroups POST /detect-bias attached to it (docs/reference/bias.md, Subgroups).
    SUBGROUPS_ATTACHED = "subgroups_attached"
    ERASURE = "erasure"
    # A change of the retention policy or legal hold (docs/reference/erasure.md).
    RETENTION_POLICY_CHANGED = "retention_policy_changed"
    # The drift monitors' entries (docs/reference/drift.md, The entries).
    DRIFT_MONITOR_CONFIGURED = "drift_monitor.configured"
    DRIFT_MONITOR_BASELINE_COMPLETED = "drift_monitor.baseline_completed"
    DRIFT_MONITOR_CALIBRATED = "drift_monitor.calibrated"
    DRIFT_ALARM_RAISED = "drift_alarm.raised"
    DRIFT_ALARM_ACKNOWLEDGED = "drift_alarm.acknowledged"
    PROBE_SPRT_CONCLUDED = "probe_sprt.concluded"
    # A change of a model's favourable values or of the category thresholds
    # (docs/reference/decisions.md, "What the hash covers").
    SETTINGS_CHANGED = "settings_changed"
