"""Shapes of POST /calibrate, POST /trust-score and GET /trust-score/trend
(docs/reference/calibration.md)."""

from typing import Any

from rest_framework import serializers

from calibration import rules


def rate() -> serializers.FloatField:
    """A share in 0..1, null when its denominator is 0."""
    return serializers.FloatField(allow_null=True, min_value=0, max_value=1)


class ProfileOutput(serializers.Serializer):
    user_id = serializers.CharField()
    decisions = serializers.IntegerField()
    agreement_rate = rate()
    override_rate = rate()
    mean_ai_confidence = rate()
    overtrust_rate = rate()
    undertrust_rate = rate()
    calibration_gap = serializers.FloatField(allow_null=True, min_value=-1, max_value=1)
    trust_score = rate()
    category = serializers.ChoiceField(choices=rules.USER_CATEGORIES)
    risk_level = serializers.ChoiceField(choices=rules.RISK_LEVELS)
    scored_decisions = serializers.IntegerField()
    outcomes_known = serializers.IntegerField()
    overreliance_rate = rate()
    underreliance_rate = rate()
    switch_rate = rate()
    rair = rate()
    rsr = rate()


class CalibrateOutput(serializers.Serializer):
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


class RiskUserOutput(serializers.Serializer):
    user_id = serializers.CharField()
    trust_score = rate()
    decisions = serializers.IntegerField()
    category = serializers.ChoiceField(choices=rules.USER_CATEGORIES)
    overtrust_rate = rate()
    undertrust_rate = rate()


class TrustScoreOutput(serializers.Serializer):
    scope = serializers.ChoiceField(choices=["user", "organization"])
    user_id = serializers.CharField(allow_null=True)
    model_id = serializers.CharField(allow_null=True)
    trust_score = rate()
    category = serializers.ChoiceField(choices=rules.USER_CATEGORIES)
    risk_level = serializers.ChoiceField(choices=rules.RISK_LEVELS)
    decisions_analyzed = serializers.IntegerField()
    agreement_rate = rate()
    override_rate = rate()
    overtrust_rate = rate()
    undertrust_rate = rate()
    mean_ai_confidence = rate()
    calibration_gap = serializers.FloatField(allow_null=True, min_value=-1, max_value=1)
    overreliance_rate = rate()
    underreliance_rate = rate()
    switch_rate = rate()
    rair = rate()
    rsr = rate()
    risk_users = RiskUserOutput(many=True)
    computed_at = serializers.CharField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A date; the exact instant (ISO 8601, `to` exclusive) when a bound was a timestamp inside a day.
        self.fields["from"] = serializers.CharField()
        self.fields["to"] = serializers.CharField()


class TrendPointOutput(serializers.Serializer):
    period_start = serializers.DateField()
    decisions = serializers.IntegerField()
    trust_score = rate()
    agreement_rate = rate()
    overtrust_count = serializers.IntegerField()
    undertrust_count = serializers.IntegerField()


class TrendSummaryOutput(serializers.Serializer):
    direction = serializers.ChoiceField(choices=["improving", "declining", "stable"])
    slope = serializers.FloatField()


class TrendOutput(serializers.Serializer):
    interval = serializers.ChoiceField(choices=["day", "week", "month"])
    user_id = serializers.CharField(allow_null=True)
    model_id = serializers.CharField(allow_null=True)
    points = TrendPointOutput(many=True)
    trend = TrendSummaryOutput()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A date; the exact instant (ISO 8601, `to` exclusive) when a bound was a timestamp inside a day.
        self.fields["from"] = serializers.CharField()
        self.fields["to"] = serializers.CharField()
