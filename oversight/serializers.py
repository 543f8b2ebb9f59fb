"""Output shapes of GET /oversight/review-effort and GET /oversight/vigilance (the OpenAPI
schema); the views build the bodies directly from oversight.selectors."""

from rest_framework import serializers


class RuleOutput(serializers.Serializer[dict[str, object]]):
    floor_seconds = serializers.FloatField()
    median_fraction = serializers.FloatField()
    min_timed_for_median = serializers.IntegerField()
    flag_rate = serializers.FloatField()
    min_timed_for_flag = serializers.IntegerField()


class ModelTimesOutput(serializers.Serializer[dict[str, object]]):
    model_id = serializers.CharField(allow_null=True)
    timed_decisions = serializers.IntegerField()
    median_review_seconds = serializers.FloatField(allow_null=True)
    threshold_seconds = serializers.FloatField()


class ReviewerOutput(serializers.Serializer[dict[str, object]]):
    user_id = serializers.CharField()
    decisions = serializers.IntegerField()
    timed_decisions = serializers.IntegerField()
    median_review_seconds = serializers.FloatField(allow_null=True)
    quick_decisions = serializers.IntegerField()
    quick_agreements = serializers.IntegerField()
    quick_agreement_rate = serializers.FloatField(allow_null=True)
    quick_agreement_rate_ci = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="Wilson 95 % [low, high]"
    )
    overreliance_when_quick = serializers.FloatField(allow_null=True)
    overreliance_when_considered = serializers.FloatField(allow_null=True)
    flagged = serializers.BooleanField()


class PageOutput(serializers.Serializer[dict[str, object]]):
    page = serializers.IntegerField()
    limit = serializers.IntegerField()
    total = serializers.IntegerField()
    total_pages = serializers.IntegerField()
    has_more = serializers.BooleanField()


class ReviewEffortOutput(serializers.Serializer[dict[str, object]]):
    to = serializers.CharField()
    rule = RuleOutput()
    models = ModelTimesOutput(many=True)
    data = ReviewerOutput(many=True)  # type: ignore[assignment]
    pagination = PageOutput()


class ProbeFiguresOutput(serializers.Serializer[dict[str, object]]):
    probes = serializers.IntegerField()
    known_wrong = serializers.IntegerField()
    caught = serializers.IntegerField()
    corrected = serializers.IntegerField()
    catch_rate = serializers.FloatField(allow_null=True)
    catch_rate_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    known_right = serializers.IntegerField()
    false_overrides = serializers.IntegerField()
    false_override_rate = serializers.FloatField(allow_null=True)
    false_override_rate_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    d_prime = serializers.FloatField(allow_null=True)
    evidence = serializers.ChoiceField(choices=["insufficient", "indicative", "sufficient"])


class ReviewerProbesOutput(ProbeFiguresOutput):
    user_id = serializers.CharField()


class VigilanceOutput(serializers.Serializer[dict[str, object]]):
    to = serializers.CharField()
    totals = ProbeFiguresOutput()
    data = ReviewerProbesOutput(many=True)  # type: ignore[assignment]
    pagination = PageOutput()


# `from` is a Python keyword: declared after the class body.
ReviewEffortOutput._declared_fields["from"] = serializers.CharField()
VigilanceOutput._declared_fields["from"] = serializers.CharField()
