"""Drift monitors, the points of their charts and their alarms (docs/reference/drift.md).

A monitor carries its chart's state (the engine's ChartState, in typed columns) from one point
to the next, so a write updates it in O(1) per point. Every point is stored, charted or in the
baseline, so the series and the calibration's case mix are reads, never a replay."""

from django.db import models
from django.utils import timezone

from audit.fields import ID_MAX, MODEL_ID_MAX, MODEL_VERSION_MAX, USER_ID_MAX
from config.ids import new_id
from keys.models import Customer


def _monitor_id() -> str:
    return new_id("mon")


def _alarm_id() -> str:
    return new_id("alm")


class DriftMonitor(models.Model):
    class Status(models.TextChoices):
        BASELINE = "baseline"
        CALIBRATING = "calibrating"
        LIVE = "live"
        PAUSED = "paused"

    id = models.CharField(primary_key=True, max_length=40, default=_monitor_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="drift_monitors")
    name = models.CharField(max_length=200)  # drift.inputs.NAME_MAX
    chart = models.CharField(max_length=32)
    scope = models.CharField(max_length=16)
    user_id = models.CharField(max_length=USER_ID_MAX, null=True)
    model_id = models.CharField(max_length=MODEL_ID_MAX, null=True)
    model_version = models.CharField(max_length=MODEL_VERSION_MAX, null=True)
    odds_ratio = models.FloatField(null=True)
    h = models.FloatField(null=True)
    h_source = models.CharField(max_length=16, null=True)
    arl0_target = models.IntegerField(null=True)
    seed = models.BigIntegerField()
    runs = models.IntegerField()
    # {"mode", "decisions", "collected", "first_sequence", "last_sequence", "completed_at",
    #  "entry_sequence", "fit"} or null
    baseline = models.JSONField(null=True)
    sprt = models.JSONField(null=True)  # {"p0", "p1", "alpha", "beta"} as given
    calibration = models.JSONField(null=True)  # the last applied calibration's answer
    enabled = models.BooleanField(default=True)
    status = models.CharField(max_length=16, choices=Status.choices)
    # the engine's ChartState (drift.engine) in typed columns (drift.wire.state_of), so the write
    # path reads and saves it without a JSON text: the points so far, X (or S) carried, whether
    # the next point restarts, an alarm open, and the current run (null without one)
    chart_points = models.IntegerField(default=0)
    chart_statistic = models.FloatField(default=0.0)
    chart_restart = models.BooleanField(default=True)
    chart_open_alarm = models.BooleanField(default=False)
    run_start_index = models.IntegerField(null=True)
    run_points = models.IntegerField(null=True)
    run_first_sequence = models.BigIntegerField(null=True)
    run_last_sequence = models.BigIntegerField(null=True)
    run_time_from = models.DateTimeField(null=True)
    run_time_to = models.DateTimeField(null=True)
    run_excess = models.FloatField(null=True)
    run_misses = models.IntegerField(null=True)
    open_alarm_id = models.CharField(max_length=40, null=True)
    alarms_raised = models.IntegerField(default=0)
    conclusions_h0 = models.IntegerField(null=True)
    conclusions_h1 = models.IntegerField(null=True)
    last_sequence = models.BigIntegerField(null=True)  # the last point's entry
    # The automatic calibration of a `calibrating` monitor on a worker (drift.services): the
    # claims so far, and until when the current one holds it (null: nobody holds it).
    calibration_attempts = models.IntegerField(default=0)
    calibration_lease_until = models.DateTimeField(null=True)
    configured_sequence = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    deleted_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "deleted_at", "configured_sequence"], name="drift_mon_cust")
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.chart})"


class DriftPoint(models.Model):
    """One eligible point of a monitor: a chart point (`index` set) or a baseline point."""

    # No index of its own (both indexes below lead with it) and no database constraint: a batch
    # appends a row per point and monitor (50,000 at 50 monitors), and the constraint's check per
    # row at COMMIT and the two extra indexes were about 40 % of the server's time for them
    # (bench/README.md, Drift). Points are written only by the write path, for monitors it has
    # just read under the chain's lock; a monitor is never deleted but with its customer, and
    # Django's CASCADE deletes its points first.
    monitor = models.ForeignKey(
        DriftMonitor, on_delete=models.CASCADE, related_name="points", db_index=False, db_constraint=False
    )
    baseline = models.BooleanField(default=False)
    index = models.IntegerField(null=True)
    sequence = models.BigIntegerField()
    decision_id = models.CharField(max_length=ID_MAX)
    user_id = models.CharField(max_length=USER_ID_MAX, null=True)
    timestamp = models.DateTimeField()
    ai_confidence = models.FloatField(null=True)
    event = models.SmallIntegerField()
    p = models.FloatField(null=True)
    w = models.FloatField(null=True)
    x = models.FloatField(null=True)
    llr = models.FloatField(null=True)
    llr_sum = models.FloatField(null=True)
    restart = models.BooleanField(default=False)
    signal = models.BooleanField(default=False)
    conclusion = models.CharField(max_length=2, null=True)
    alarm_id = models.CharField(max_length=40, null=True)

    class Meta:
        indexes = [
            models.Index(fields=["monitor", "baseline", "index"], name="drift_point_mon_index"),
            models.Index(fields=["monitor", "baseline", "sequence"], name="drift_point_mon_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.monitor_id} #{self.index}"


class DriftAlarm(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        ACKNOWLEDGED = "acknowledged"

    id = models.CharField(primary_key=True, max_length=40, default=_alarm_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="drift_alarms")
    monitor = models.ForeignKey(DriftMonitor, on_delete=models.CASCADE, related_name="alarms")
    monitor_snapshot = models.JSONField()
    chart = models.CharField(max_length=32)
    user_id = models.CharField(max_length=USER_ID_MAX, null=True)
    model_id = models.CharField(max_length=MODEL_ID_MAX, null=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    point_index = models.IntegerField()
    decision_id = models.CharField(max_length=ID_MAX)
    decision_sequence = models.BigIntegerField()
    statistic = models.FloatField()
    threshold = models.FloatField()
    run = models.JSONField()
    excess = models.FloatField()
    severity = models.CharField(max_length=8)
    signals = models.IntegerField(default=1)
    last_signal_index = models.IntegerField()
    last_signal_sequence = models.BigIntegerField()
    raised_at = models.DateTimeField()
    entry_sequence = models.BigIntegerField()
    acknowledged_at = models.DateTimeField(null=True)
    acknowledged_by = models.CharField(max_length=256, null=True)
    disposition = models.CharField(max_length=32, null=True)
    note = models.TextField(null=True)
    acknowledgement_entry_sequence = models.BigIntegerField(null=True)

    class Meta:
        indexes = [models.Index(fields=["customer", "raised_at", "id"], name="drift_alarm_cust_raised")]
        # the console's Acknowledge form (docs/reference/drift.md, When an alarm fires)
        permissions = [("acknowledge_alarm", "Can acknowledge drift alarms")]

    def __str__(self) -> str:
        return f"{self.id} ({self.chart})"
