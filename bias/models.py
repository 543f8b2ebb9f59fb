"""Subgroup attributes, the daily subgroup statistics store, favourable values and bias alerts
(docs/reference/bias.md).

The statistics store is what keeps bias detection, GET /bias/subgroups and the fairness
app's amplification analysis independent of history: every decision that carries subgroup
attributes adds 1 to one row per attribute, keyed by everything those readers group or
filter on. Readers sum a bounded number of rows (days x groups x value combinations).
"""

from django.db import models
from django.utils import timezone

from config.ids import new_id
from keys.models import Customer

ATTRIBUTE_MAX = 263  # "custom." + a key of up to 256 characters
GROUP_MAX = 256  # the same limits as the subgroups validation of POST /log
CUSTOM_KEY_MAX = 256


class Severity(models.TextChoices):
    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


SEVERITY_RANK = {"none": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}


class BiasType(models.TextChoices):
    DISPARATE_IMPACT = "disparate_impact"
    OUTCOME_DISPARITY = "outcome_disparity"
    OVERRIDE_DISPARITY = "override_disparity"
    RECOMMENDATION_DISPARITY = "recommendation_disparity"
    ACCURACY_DISPARITY = "accuracy_disparity"


class Correctness(models.IntegerChoices):
    """Whether a value matched the outcome. A small integer, never NULL, so that it can be
    part of the upsert key (NULLs never conflict in a unique index)."""

    UNKNOWN = 0
    CORRECT = 1
    WRONG = 2


class SubgroupAttachment(models.Model):
    """Subgroups attached through POST /detect-bias, joined on (customer, decision_id).

    `attributes` maps attribute names ("gender", "age_group", "ethnicity", "custom.<key>") to
    group values. `counted` is true once the decision exists and these attributes are in
    the statistics (they then override the subgroups the decision was logged with); a row
    with `counted = false` is pending (posted before the decision). A decision logged with
    subgroups and never re-attached has no row: its own subgroups are what is counted."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="subgroup_attachments")
    decision_id = models.CharField(max_length=128)
    attributes = models.JSONField(default=dict)
    counted = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["customer", "decision_id"], name="bias_attachment_unique_decision"
            )
        ]
        indexes = [models.Index(fields=["updated_at"], name="bias_attach_updated")]

    def __str__(self) -> str:
        return f"{self.customer_id}/{self.decision_id}"


class SubgroupDailyStat(models.Model):
    """Counts of decisions per (customer, UTC day of the decision's timestamp, model_id,
    model_version, attribute, group, AI value, human value, calibration category, human
    correctness, AI correctness). Values are trimmed and case-folded; model_id/version ''
    when unset. `key_hash` (SHA-256 of the dimensions) is the upsert target, so the unique
    index stays small whatever the value lengths are. Written only through raw upserts
    that add deltas (`count = count + EXCLUDED.count`), which are safe under concurrency."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="+")
    key_hash = models.CharField(max_length=64)
    day = models.DateField()
    model_id = models.CharField(max_length=256, blank=True, default="")
    model_version = models.CharField(max_length=128, blank=True, default="")
    attribute = models.CharField(max_length=ATTRIBUTE_MAX)
    group_value = models.CharField(max_length=GROUP_MAX)
    ai_value = models.CharField(max_length=1000)
    human_value = models.CharField(max_length=1000)
    category = models.CharField(max_length=16)
    human_correct = models.SmallIntegerField(choices=Correctness.choices, default=Correctness.UNKNOWN)
    ai_correct = models.SmallIntegerField(choices=Correctness.choices, default=Correctness.UNKNOWN)
    count = models.BigIntegerField(default=0)
    # Decisions with an ai_confidence, and the sum of those confidences in millionths
    # (integers, so increments and decrements never drift).
    confidence_count = models.BigIntegerField(default=0)
    confidence_micros = models.BigIntegerField(default=0)
    # The stake weights of the decisions, in units of 1e-12 (docs/architecture.md, Subgroup
    # statistics): sums of w_o, w_o^2, w_u, w_u^2. The value columns say whether a row's
    # decisions were followed, so the rates' numerators are sums over rows too.
    wo_pico = models.BigIntegerField(default=0)
    wo_sq_pico = models.BigIntegerField(default=0)
    wu_pico = models.BigIntegerField(default=0)
    wu_sq_pico = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["customer", "key_hash"], name="bias_stat_unique_key"),
        ]
        indexes = [
            models.Index(
                fields=["customer", "model_id", "attribute", "day"], name="bias_stat_model_attr_day"
            ),
            models.Index(fields=["customer", "attribute", "day"], name="bias_stat_attr_day"),
        ]

    def __str__(self) -> str:
        return (
            f"{self.customer_id} {self.day} {self.model_id} {self.attribute}={self.group_value}: {self.count}"
        )


class ModelFavorableValues(models.Model):
    """A customer's favourable decision values for one model (admin-editable). Without a row the default
    list applies (docs/reference/bias.md, Favourable values). Compared trimmed and case-folded."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="favorable_values")
    model_id = models.CharField(max_length=256)
    values = models.JSONField(default=list, help_text='A JSON list of strings, e.g. ["approve", "approved"].')
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "model favourable values"
        verbose_name_plural = "model favourable values"
        constraints = [
            models.UniqueConstraint(fields=["customer", "model_id"], name="bias_favorable_unique_model")
        ]

    def __str__(self) -> str:
        return f"{self.customer_id}/{self.model_id}"


def _alert_id() -> str:
    return new_id("bal")


class BiasAlert(models.Model):
    """A stored bias detection result of severity low or above (docs/reference/bias.md), shown on GET
    /bias/feed."""

    id = models.CharField(primary_key=True, max_length=40, default=_alert_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="bias_alerts")
    # null once the decision's subject was erased: with the findings' groups (a group may have one
    # member) it would tell that decision's attributes (docs/reference/erasure.md).
    decision_id = models.CharField(max_length=128, null=True, blank=True)
    model_id = models.CharField(max_length=256, null=True, blank=True)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    bias_types = models.JSONField(default=list)
    attributes = models.JSONField(default=list)
    findings = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "-created_at"], name="bias_alert_cust_created"),
            models.Index(fields=["customer", "severity", "-created_at"], name="bias_alert_cust_sev"),
            models.Index(fields=["customer", "model_id", "-created_at"], name="bias_alert_cust_model"),
            models.Index(fields=["created_at"], name="bias_alert_created"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.severity}"


class BiasAlertFinding(models.Model):
    """One finding of an alert, as a row so the feed filters by bias type and attribute
    in SQL on every database (JSON containment is not portable)."""

    alert = models.ForeignKey(BiasAlert, on_delete=models.CASCADE, related_name="finding_rows")
    bias_type = models.CharField(max_length=32, choices=BiasType.choices)
    attribute = models.CharField(max_length=ATTRIBUTE_MAX)
    group_value = models.CharField(max_length=GROUP_MAX)
    reference_group = models.CharField(max_length=GROUP_MAX)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    value = models.FloatField()
    p_value = models.FloatField(null=True)
    # Benjamini-Hochberg adjusted; null for a finding without a test, and for alerts stored
    # before the adjustment existed (docs/reference/bias.md, Alerts stored before).
    q_value = models.FloatField(null=True)

    class Meta:
        indexes = [models.Index(fields=["bias_type", "attribute"], name="bias_finding_type_attr")]

    def __str__(self) -> str:
        return f"{self.bias_type} {self.attribute}: {self.group_value} vs {self.reference_group}"
