"""camelCase wire shapes of signals and amplification alerts (docs/reference/conventions.md, Key case;
docs/reference/fairness.md)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import UTCDateTimeField
from fairness.amplification import RISK_LEVELS
from fairness.models import AlertStatus, AmplificationAlert, FairnessSignal, Severity

# --- documentation of the analysis object (it is stored and served as the JSON it was built as)


class AnalysisGroupDoc(serializers.Serializer):
    name = serializers.CharField(allow_null=True)
    decisions = serializers.IntegerField()
    aiRates = serializers.DictField(child=serializers.FloatField())
    humanRates = serializers.DictField(child=serializers.FloatField())


class AnalysisGroupsDoc(serializers.Serializer):
    privileged = AnalysisGroupDoc()
    unprivileged = AnalysisGroupDoc()


class AnalysisDoc(serializers.Serializer):
    status = serializers.ChoiceField(choices=["completed", "insufficient_data"])
    amplificationScore = serializers.FloatField(allow_null=True, min_value=0, max_value=1)
    riskLevel = serializers.ChoiceField(choices=RISK_LEVELS, allow_null=True)
    direction = serializers.ChoiceField(choices=["amplifying", "mitigating", "neutral"], allow_null=True)
    modelDisparityObserved = serializers.FloatField(allow_null=True)
    humanDisparity = serializers.FloatField(allow_null=True)
    modelDisparityReported = serializers.FloatField()
    decisionsAnalyzed = serializers.IntegerField()
    groups = AnalysisGroupsDoc()
    analyzedAt = serializers.CharField(allow_null=True)


@extend_schema_field(AnalysisDoc)
class AnalysisField(serializers.JSONField):
    pass


class ConfidenceIntervalDoc(serializers.Serializer):
    lower = serializers.FloatField()
    upper = serializers.FloatField()


@extend_schema_field(ConfidenceIntervalDoc(allow_null=True))
class ConfidenceIntervalField(serializers.JSONField):
    pass


@extend_schema_field({"type": "object", "additionalProperties": True})
class RawPayloadField(serializers.Field):
    def to_representation(self, value):
        return value


# --- output --------------------------------------------------------------------------------


class SignalOutput(serializers.ModelSerializer):
    customerId = serializers.CharField(source="customer_id")
    externalToolId = serializers.CharField(source="external_tool_id")
    externalToolVersion = serializers.CharField(source="external_tool_version", allow_null=True)
    modelId = serializers.CharField(source="model_id")
    modelVersion = serializers.CharField(source="model_version", allow_null=True)
    metricName = serializers.CharField(source="metric_name")
    metricValue = serializers.FloatField(source="metric_value")
    threshold = serializers.FloatField(allow_null=True)
    passesThreshold = serializers.BooleanField(source="passes_threshold", allow_null=True)
    protectedAttribute = serializers.CharField(source="protected_attribute")
    privilegedGroup = serializers.CharField(source="privileged_group", allow_null=True)
    unprivilegedGroup = serializers.CharField(source="unprivileged_group", allow_null=True)
    sampleSize = serializers.IntegerField(source="sample_size", allow_null=True)
    confidenceInterval = ConfidenceIntervalField(source="confidence_interval", allow_null=True)
    rawPayload = RawPayloadField(source="raw_payload")
    signalTimestamp = UTCDateTimeField(source="signal_timestamp")
    ingestedAt = UTCDateTimeField(source="ingested_at")
    analysis = AnalysisField()
    alertId = serializers.SerializerMethodField()

    class Meta:
        model = FairnessSignal
        fields = [
            "id", "customerId", "externalToolId", "externalToolVersion", "modelId", "modelVersion", "metricName",
            "metricValue", "threshold", "passesThreshold", "protectedAttribute", "privilegedGroup",
            "unprivilegedGroup", "sampleSize", "confidenceInterval", "rawPayload", "signalTimestamp", "ingestedAt",
            "analysis", "alertId",
        ]  # fmt: skip

    def get_alertId(self, obj: FairnessSignal) -> str | None:
        try:
            return obj.alert.id
        except AmplificationAlert.DoesNotExist:
            return None


class AlertOutput(serializers.ModelSerializer):
    signalId = serializers.CharField(source="signal_id")
    modelId = serializers.CharField(source="model_id")
    protectedAttribute = serializers.CharField(source="protected_attribute")
    amplificationScore = serializers.FloatField(source="amplification_score")
    riskLevel = serializers.ChoiceField(source="risk_level", choices=RISK_LEVELS)
    severity = serializers.ChoiceField(choices=Severity.choices)
    status = serializers.ChoiceField(choices=AlertStatus.choices)
    analysis = AnalysisField()
    resolutionNotes = serializers.CharField(source="resolution_notes", allow_null=True)
    resolvedBy = serializers.CharField(source="resolved_by", allow_null=True)
    resolvedAt = UTCDateTimeField(source="resolved_at", allow_null=True)
    acknowledgedAt = UTCDateTimeField(source="acknowledged_at", allow_null=True)
    createdAt = UTCDateTimeField(source="created_at")
    updatedAt = UTCDateTimeField(source="updated_at")

    class Meta:
        model = AmplificationAlert
        fields = [
            "id", "signalId", "modelId", "protectedAttribute", "amplificationScore", "riskLevel", "severity",
            "status", "analysis", "resolutionNotes", "resolvedBy", "resolvedAt", "acknowledgedAt", "createdAt",
            "updatedAt",
        ]  # fmt: skip


class StatusChangeOutput(serializers.Serializer):
    """One status change: {"from", "to", "by", "notes", "at"} ("from" is a Python keyword)."""

    def get_fields(self):
        return {
            "from": serializers.ChoiceField(source="from_status", choices=AlertStatus.choices),
            "to": serializers.ChoiceField(source="to_status", choices=AlertStatus.choices),
            "by": serializers.CharField(allow_null=True),
            "notes": serializers.CharField(allow_null=True),
            "at": UTCDateTimeField(),
        }


class AlertDetailOutput(AlertOutput):
    signal = SignalOutput()
    statusHistory = StatusChangeOutput(source="status_changes", many=True)

    class Meta(AlertOutput.Meta):
        fields = [*AlertOutput.Meta.fields, "signal", "statusHistory"]


class AnalyzeOutput(serializers.Serializer):
    signalId = serializers.CharField()
    analysis = AnalysisField()
    alert = AlertOutput(allow_null=True)
