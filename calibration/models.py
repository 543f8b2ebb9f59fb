"""Per-user daily aggregates (every figure of docs/reference/calibration.md is computed from their sums;
the columns are docs/architecture.md, Calibration aggregates),
the risk-user notification state, and staff-defined thresholds."""

from django.db import models
from django.utils import timezone

from keys.models import Customer

ALL_MODELS = "*"


class AggregateSums(models.Model):
    """The summed columns every calibration figure is computed from (docs/architecture.md,
    Calibration aggregates)."""

    n = models.BigIntegerField(default=0)
    followed = models.BigIntegerField(default=0)
    overtrust = models.BigIntegerField(default=0)
    undertrust = models.BigIntegerField(default=0)
    conf_n = models.BigIntegerField(default=0)
    conf_sum = models.FloatField(default=0)
    outcome_n = models.BigIntegerField(default=0)
    ai_right_n = models.BigIntegerField(default=0)
    followed_wrong = models.BigIntegerField(default=0)
    overrode_right = models.BigIntegerField(default=0)
    gap_sum = models.FloatField(default=0)
    scored_n = models.BigIntegerField(default=0)
    scored_followed = models.BigIntegerField(default=0)
    p_sum = models.FloatField(default=0)
    q_sum = models.FloatField(default=0)
    a_conf_sum = models.FloatField(default=0)
    oo_n = models.BigIntegerField(default=0)
    wo_sum = models.FloatField(default=0)
    wo_sq = models.FloatField(default=0)
    fwo_sum = models.FloatField(default=0)
    wu_sum = models.FloatField(default=0)
    wu_sq = models.FloatField(default=0)
    uwu_sum = models.FloatField(default=0)
    cy_n = models.BigIntegerField(default=0)
    brier_sum = models.FloatField(default=0)
    sw_den = models.BigIntegerField(default=0)
    sw_num = models.BigIntegerField(default=0)
    rair_den = models.BigIntegerField(default=0)
    rair_num = models.BigIntegerField(default=0)
    rsr_den = models.BigIntegerField(default=0)
    rsr_num = models.BigIntegerField(default=0)
    oo_followed_wrong = models.BigIntegerField(default=0)

    class Meta:
        abstract = True


class UserDailyAggregate(AggregateSums):
    """One row per customer, user, UTC day of the decision's timestamp and model key.

    Every decision is counted in the `model_key="*"` row (all models) and, when it names
    a model, in that model's row too, so a user's figures read at most 90 rows and a
    model filter reads that model's rows only. Updated in the decision's transaction."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="calibration_days")
    user_id = models.CharField(max_length=256)
    model_key = models.CharField(max_length=256, default=ALL_MODELS, help_text='"*" = all models')
    day = models.DateField()

    class Meta:
        verbose_name = "user profile (daily aggregate)"
        verbose_name_plural = "user profiles (daily aggregates)"
        constraints = [
            models.UniqueConstraint(
                fields=["customer", "user_id", "model_key", "day"],
                name="calibration_one_row_per_user_model_day",
            ),
        ]
        indexes = [models.Index(fields=["customer", "model_key", "day"], name="calibration_cust_model_day")]

    def __str__(self) -> str:
        return f"{self.customer_id}/{self.user_id}/{self.model_key}/{self.day}"


class UserWeeklyAggregate(AggregateSums):
    """The daily rows of one ISO week (Monday to Sunday) summed: one row per customer, user,
    model key and week. Kept by the database itself (a trigger on the daily table adds every
    change of a daily row to its week in the same transaction), so every writer of the daily
    rows keeps it without knowing it. A long window reads its whole weeks here and only its
    edge days from the daily rows (docs/architecture.md, Calibration aggregates)."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="calibration_weeks")
    user_id = models.CharField(max_length=256)
    model_key = models.CharField(max_length=256, default=ALL_MODELS, help_text='"*" = all models')
    week = models.DateField(help_text="the week's Monday (UTC)")

    class Meta:
        verbose_name = "user profile (weekly sum)"
        verbose_name_plural = "user profiles (weekly sums)"
        constraints = [
            models.UniqueConstraint(
                fields=["customer", "user_id", "model_key", "week"],
                name="calibration_one_row_per_user_model_week",
            ),
        ]
        indexes = [models.Index(fields=["customer", "model_key", "week"], name="calibration_cust_model_week")]

    def __str__(self) -> str:
        return f"{self.customer_id}/{self.user_id}/{self.model_key}/week of {self.week}"


class RiskUserState(models.Model):
    """Whether a user is currently at risk, and when risk_user.identified last fired
    (at most once per user per 24 hours, and only on becoming a risk user:
    docs/reference/calibration.md, Risk users)."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="risk_user_states")
    user_id = models.CharField(max_length=256)
    at_risk = models.BooleanField(default=False)
    trust_score = models.FloatField(null=True, blank=True)
    last_identified_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["customer", "user_id"], name="calibration_one_risk_state_per_user"
            )
        ]

    def __str__(self) -> str:
        return f"{self.customer_id}/{self.user_id} at_risk={self.at_risk}"


class Threshold(models.Model):
    """A staff-defined threshold on a customer's figure over the last `window_days`,
    checked by the beat task `calibration.tasks.thresholds_check`. `threshold.breached`
    fires once when the figure crosses it; it can fire again after the figure recovers."""

    class Figure(models.TextChoices):
        OVERRIDE_RATE = "override_rate"
        AGREEMENT_RATE = "agreement_rate"
        OVERTRUST_RATE = "overtrust_rate"
        UNDERTRUST_RATE = "undertrust_rate"
        TRUST_SCORE = "trust_score"
        CALIBRATION_GAP = "calibration_gap"
        MEAN_AI_CONFIDENCE = "mean_ai_confidence"

    class Comparison(models.TextChoices):
        GT = "gt", "greater than"
        GTE = "gte", "greater than or equal"
        LT = "lt", "less than"
        LTE = "lte", "less than or equal"

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="thresholds")
    name = models.CharField(max_length=200, blank=True, default="")
    figure = models.CharField(max_length=32, choices=Figure.choices)
    comparison = models.CharField(max_length=8, choices=Comparison.choices)
    value = models.FloatField()
    window_days = models.PositiveIntegerField(default=7)
    model_id = models.CharField(max_length=256, blank=True, default="", help_text="Blank: all models.")
    min_decisions = models.PositiveIntegerField(default=1, help_text="Ignore windows with fewer decisions.")
    is_active = models.BooleanField(default=True)
    breached = models.BooleanField(default=False, editable=False)
    last_value = models.FloatField(null=True, blank=True, editable=False)
    last_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    breached_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        indexes = [models.Index(fields=["is_active", "customer"], name="calibration_threshold_active")]

    def __str__(self) -> str:
        return self.name or f"{self.customer_id}: {self.figure} {self.comparison} {self.value}"

    def is_breached_by(self, observed: float) -> bool:
        return {
            "gt": observed > self.value,
            "gte": observed >= self.value,
            "lt": observed < self.value,
            "lte": observed <= self.value,
        }[self.comparison]
