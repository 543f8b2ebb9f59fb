"""Shapes of POST /calibrate, POST /trust-score and GET /trust-score/trend
(docs/reference/calibration.md)."""

from rest_framework import serializers

from calibration import rules
from calibration.confidence import ConfidenceCheck
from calibration.documents import ListedRiskUser, TrendPoint, TrendSummary, UserFigures
from config.jsondoc import JSONValue


def rate() -> serializers.FloatField:
    """A share in 0..1, null when its denominator is 0."""
    return serializers.FloatField(allow_null=True, min_value=0, max_value=1)


def interval() -> serializers.ListField:
    """A 95 % interval [low, high] in 0..1."""
    return serializers.ListField(
        child=serializers.FloatField(min_value=0, max_value=1), min_length=2, max_length=2
    )


# a field of any type; the figures are numbers, intervals and labels
# A field of a figures document: DRF's field, generic over values that are JSON.
Figure = serializers.Field[JSONValue, JSONValue, JSONValue, JSONValue]


def figure_fields() -> dict[str, Figure]:
    """The figures of a user or an organisation (docs/reference/calibration.md), served unrounded."""
    return {
        "scored_decisions": serializers.IntegerField(),
        "unscored_decisions": serializers.IntegerField(),
        "confidence_decisions": serializers.IntegerField(help_text="scored decisions with a confidence"),
        "coverage": rate(),
        "agreement_rate": rate(),
        "override_rate": rate(),
        "mean_ai_confidence": rate(),
        "calibration_gap": serializers.FloatField(allow_null=True, min_value=-1, max_value=1),
        "trust_score": rate(),
        "attainable_score": rate(),
        "reliance_gap": serializers.FloatField(allow_null=True, min_value=-1, max_value=1),
        "reliance_skill": serializers.FloatField(allow_null=True),
        "overtrust_rate": rate(),
        "overtrust_effective_n": serializers.FloatField(min_value=0),
        "overtrust_rate_ci": interval(),
        "undertrust_rate": rate(),
        "undertrust_effective_n": serializers.FloatField(min_value=0),
        "undertrust_rate_ci": interval(),
        "discrimination": serializers.FloatField(allow_null=True, min_value=-1, max_value=1),
        "discrimination_ci": serializers.ListField(
            child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True
        ),
        "category": serializers.ChoiceField(choices=rules.USER_CATEGORIES),
        "risk_level": serializers.ChoiceField(choices=rules.RISK_LEVELS),
        "outcomes_known": serializers.IntegerField(),
        "ai_accuracy": rate(),
        "overreliance_rate": rate(),
        "underreliance_rate": rate(),
        "switch_rate": rate(),
        "rair": rate(),
        "rsr": rate(),
        "automation_bias_incidents": serializers.IntegerField(),
        "automation_bias_rate": rate(),
        "followed_ai_errors": serializers.IntegerField(
            help_text="followed without a confidence where the outcome shows the AI wrong (not incidents)"
        ),
        "confidence_recalibrated": serializers.BooleanField(
            help_text="the confidence check rejected the AI's confidence: figures judged with p'"
        ),
    }


FIGURE_KEYS = list(figure_fields())


class ProfileOutput(serializers.Serializer[UserFigures]):
    user_id = serializers.CharField()
    decisions = serializers.IntegerField()

    def get_fields(self) -> dict[str, Figure]:
        return {**super().get_fields(), **figure_fields()}


class CalibrateOutput(serializers.Serializer[dict[str, object]]):
    decision_id = serializers.CharField()
    entry_id = serializers.CharField()
    user_id = serializers.CharField()
    followed_ai = serializers.BooleanField()
    confidence = serializers.FloatField(allow_null=True)
    calibration_category = serializers.ChoiceField(choices=rules.RECORD_CATEGORIES)
    explanation = serializers.CharField()
    user_profile = ProfileOutput()
    recommendations = serializers.ListField(child=serializers.CharField())
    analyzed_at = serializers.CharField()


class RiskUserOutput(serializers.Serializer[ListedRiskUser]):
    user_id = serializers.CharField()
    trust_score = rate()
    reliance_gap = serializers.FloatField(allow_null=True, min_value=-1, max_value=1)
    risk_level = serializers.ChoiceField(choices=rules.RISK_LEVELS)
    decisions = serializers.IntegerField()
    scored_decisions = serializers.IntegerField()
    category = serializers.ChoiceField(choices=rules.USER_CATEGORIES)
    overtrust_rate = rate()
    overtrust_rate_ci = interval()
    undertrust_rate = rate()
    undertrust_rate_ci = interval()


class ConfidenceCheckOutput(serializers.Serializer[ConfidenceCheck]):
    decisions = serializers.IntegerField(
        help_text="decisions with a confidence and an outcome the check read"
    )
    limit = serializers.IntegerField(help_text="the most recent decisions with both it reads at most")
    intercept = serializers.FloatField(allow_null=True)
    intercept_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    slope = serializers.FloatField(allow_null=True)
    slope_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    brier_score = rate()
    lr_statistic = serializers.FloatField(allow_null=True, help_text="likelihood ratio of (a, b) = (0, 1)")
    lr_p_value = serializers.FloatField(allow_null=True, help_text="chi-squared on 2 degrees of freedom")
    verdict = serializers.ChoiceField(choices=["consistent", "miscalibrated", "not_checked"])


class TrustScoreOutput(serializers.Serializer[dict[str, object]]):
    scope = serializers.ChoiceField(choices=["user", "organization"])
    user_id = serializers.CharField(allow_null=True)
    model_id = serializers.CharField(allow_null=True)
    decisions_analyzed = serializers.IntegerField()
    risk_users = RiskUserOutput(many=True)
    confidence_check = ConfidenceCheckOutput(required=False, help_text="organisation scope only")
    computed_at = serializers.CharField()

    def get_fields(self) -> dict[str, Figure]:
        # A date; the exact instant (ISO 8601, `to` exclusive) when a bound was a timestamp inside a day.
        return {
            **super().get_fields(),
            **figure_fields(),
            "from": serializers.CharField(),
            "to": serializers.CharField(),
        }


class TrendPointOutput(serializers.Serializer[TrendPoint]):
    period_start = serializers.DateField()
    decisions = serializers.IntegerField()
    scored_decisions = serializers.IntegerField()
    trust_score = rate()
    attainable_score = rate()
    reliance_gap = serializers.FloatField(allow_null=True, min_value=-1, max_value=1)
    agreement_rate = rate()
    overtrust_count = serializers.IntegerField()
    undertrust_count = serializers.IntegerField()
    followed_ai_errors = serializers.IntegerField()


class TrendSummaryOutput(serializers.Serializer[TrendSummary]):
    direction = serializers.ChoiceField(choices=["improving", "declining", "stable", "undetermined"])
    slope = serializers.FloatField(allow_null=True, help_text="of the reliance gap per period (WLS)")
    slope_se = serializers.FloatField(allow_null=True)
    periods_fitted = serializers.IntegerField(help_text="complete periods with scored decisions")


class TrendOutput(serializers.Serializer[dict[str, object]]):
    interval = serializers.ChoiceField(choices=["day", "week", "month"])
    user_id = serializers.CharField(allow_null=True)
    model_id = serializers.CharField(allow_null=True)
    points = TrendPointOutput(many=True)
    trend = TrendSummaryOutput()

    def get_fields(self) -> dict[str, Figure]:
        # A date; the exact instant (ISO 8601, `to` exclusive) when a bound was a timestamp inside a day.
        return {**super().get_fields(), "from": serializers.CharField(), "to": serializers.CharField()}
