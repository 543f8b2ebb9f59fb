from rest_framework import serializers

from compliance.catalogue import FORMATS, TEMPLATE_IDS
from compliance.models import ExportJob
from config.api import UTCDateTimeField


class ExportOutput(serializers.ModelSerializer):
    """An export job: `download_url`, `size_bytes`, `sha256` and `completed_at` once
    completed; `error` when failed."""

    export_id = serializers.CharField(source="id")
    download_url = serializers.CharField(allow_null=True)
    created_at = UTCDateTimeField()
    started_at = UTCDateTimeField(allow_null=True)
    completed_at = UTCDateTimeField(allow_null=True)
    size_bytes = serializers.IntegerField(allow_null=True)
    sha256 = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    compliance_status = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = [
            "export_id",
            "status",
            "template",
            "format",
            "time_period",
            "filters",
            "created_at",
            "started_at",
            "completed_at",
            "download_url",
            "size_bytes",
            "sha256",
            "compliance_status",
            "error",
        ]

    def get_sha256(self, job: ExportJob) -> str | None:
        return job.sha256 or None

    def get_error(self, job: ExportJob) -> str | None:
        return job.error or None

    def get_compliance_status(self, job: ExportJob) -> str | None:
        return job.compliance_status or None


class _TemplateSectionOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The section's key in the json format's `sections`")
    title = serializers.CharField()


class _TemplateOutput(serializers.Serializer):
    id = serializers.ChoiceField(choices=TEMPLATE_IDS, help_text="The value for POST /export's `template`")
    name = serializers.CharField()
    regulation = serializers.CharField(help_text="The regulation the report gives evidence for")
    description = serializers.CharField()
    formats = serializers.ListField(child=serializers.ChoiceField(choices=FORMATS))
    sections = _TemplateSectionOutput(many=True, help_text="The report's sections, in the order they appear")


class TemplatesOutput(serializers.Serializer):
    """GET /export/templates: every report template with its formats and sections, under
    `data` (declared in get_fields: `data` is a serializer's own property)."""

    def get_fields(self):
        return {"data": _TemplateOutput(many=True)}
