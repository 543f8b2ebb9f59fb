"""Output shapes of the bias endpoints (docs/reference/bias.md). snake_case."""

from typing import Any

from rest_framework import serializers

from bias.detection import Detection, Finding, SampleSizes
from bias.models import BiasType, Severity
from bias.subgroup_figures import AttributeFigures, Disparity, GroupFigures, SubgroupReport
from config.api import UTCDateTimeField


class SampleSizesOutput(serializers.Serializer[SampleSizes]):
    group = serializers.IntegerField()
    reference_group = serializers.IntegerField()


class FindingOutput(serializers.Serializer[Finding]):
    bias_type = serializers.ChoiceField(choices=BiasType.choices)
    attribute = serializers.CharField()
    group = serializers.CharField()
    reference_group = serializers.CharField()
    group_rate = serializers.FloatField()
    reference_rate = serializers.FloatField()
    value = serializers.FloatField()
    sample_sizes = SampleSizesOutput()
    # Alerts stored before these three fields existed were all tested by the z-test and never
    # adjusted (docs/reference/bias.md, Alerts stored before): the defaults say so.
    testable = serializers.BooleanField(default=True)
    test = serializers.ChoiceField(choices=["fisher_exact", "z_test"], allow_null=True, default="z_test")
    p_value = serializers.FloatField(allow_null=True)
    q_value = serializers.FloatField(allow_null=True, default=None)
    severity = serializers.ChoiceField(choices=Severity.choices)
    regulation = serializers.CharField()
    # A finding: a gap of at least `low`, tested with q < 0.05 (docs/reference/bias.md, Findings).
    finding = serializers.BooleanField(default=True)


class DetectBiasOutput(serializers.Serializer[Detection]):
    decision_id = serializers.CharField()
    bias_detected = serializers.BooleanField()
    severity = serializers.ChoiceField(choices=Severity.choices)
    findings = FindingOutput(many=True)
    comparisons = FindingOutput(many=True, help_text="every other comparison made (finding: false)")
    alert_id = serializers.CharField(allow_null=True)
    analyzed_at = UTCDateTimeField()


# Any: a BiasAlert, or a page of them (many=True), which DRF's stubs type as one instance
class BiasAlertOutput(serializers.Serializer[Any]):
    alert_id = serializers.CharField(source="id")
    decision_id = serializers.CharField(
        allow_null=True, help_text="null once the decision's subject was erased (docs/reference/erasure.md)"
    )
    model_id = serializers.CharField(allow_null=True)
    severity = serializers.ChoiceField(choices=Severity.choices)
    bias_types = serializers.ListField(child=serializers.ChoiceField(choices=BiasType.choices))
    attributes = serializers.ListField(child=serializers.CharField())
    findings = FindingOutput(many=True)
    created_at = UTCDateTimeField()


class DisparityOutput(serializers.Serializer[Disparity]):
    favorable_rate_difference = serializers.FloatField()
    disparate_impact_ratio = serializers.FloatField(allow_null=True)
    override_rate_difference = serializers.FloatField()


def _stake_rate(formula: str) -> serializers.FloatField:
    return serializers.FloatField(
        allow_null=True,
        help_text=f"Stake-weighted: {formula} over the scored decisions (unrounded); null when the weight sum is 0",
    )


def _effective_n(weight: str) -> serializers.FloatField:
    return serializers.FloatField(help_text=f"Kish: (sum {weight})^2 / sum {weight}^2; 0 without weight")


def _wilson() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2, help_text="Wilson 95 % at the effective n"
    )


class SubgroupGroupOutput(serializers.Serializer[GroupFigures]):
    group = serializers.CharField()
    decisions = serializers.IntegerField()
    favorable_rate = serializers.FloatField()
    ai_favorable_rate = serializers.FloatField()
    agreement_rate = serializers.FloatField()
    override_rate = serializers.FloatField()
    scored_decisions = serializers.IntegerField(help_text="Decisions with a confidence or a known outcome")
    unscored_decisions = serializers.IntegerField()
    coverage = serializers.FloatField(help_text="scored_decisions / decisions")
    automation_bias_incidents = serializers.IntegerField(help_text="Decisions whose category is OVERTRUSTING")
    overtrust_rate = _stake_rate("sum f*w_o / sum w_o")
    overtrust_effective_n = _effective_n("w_o")
    overtrust_rate_ci = _wilson()
    undertrust_rate = _stake_rate("sum (1 - f)*w_u / sum w_u")
    undertrust_effective_n = _effective_n("w_u")
    undertrust_rate_ci = _wilson()
    mean_ai_confidence = serializers.FloatField(allow_null=True)
    decisions_with_outcome = serializers.IntegerField()
    accuracy = serializers.FloatField(allow_null=True)
    ai_accuracy = serializers.FloatField(allow_null=True)
    impact_ratio = serializers.FloatField(
        allow_null=True,
        help_text="The favourable rate over the impact reference group's (the four-fifths rule); null when "
        "that rate is 0",
    )
    disparity = DisparityOutput()


class SubgroupAttributeOutput(serializers.Serializer[AttributeFigures]):
    reference_group = serializers.CharField(help_text="The largest group: the reference of `disparity`")
    impact_reference_group = serializers.CharField(
        help_text="The group with the highest favourable rate among the groups of at least 30 decisions (all "
        "groups when none has 30): the reference of `impact_ratio`"
    )
    groups = SubgroupGroupOutput(many=True)


class SubgroupReportOutput(serializers.Serializer[SubgroupReport]):
    model_id = serializers.CharField(allow_null=True)
    from_ = serializers.CharField(
        help_text="The first day (YYYY-MM-DD, inclusive), or the exact start (ISO 8601) when a bound is inside a day"
    )
    to = serializers.CharField(
        help_text="The last day (YYYY-MM-DD, inclusive), or the exact end (ISO 8601, exclusive) when a bound is "
        "inside a day"
    )
    attributes = serializers.DictField(child=SubgroupAttributeOutput())

    # Any: DRF's fields, of any type
    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        return {("from" if name == "from_" else name): field for name, field in fields.items()}
