from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from compliance.catalogue import TEMPLATES
from config.api import TenantAPIView


class ExportTemplatesView(TenantAPIView):
    """GET /export/templates (C12): the report templates with their sections and formats."""

    @extend_schema(operation_id="export_templates")
    def get(self, request):
        return Response({"data": TEMPLATES})
