import logging

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from compliance import selectors, services
from compliance.catalogue import TEMPLATES
from compliance.exceptions import ExportNotFound, ExportNotReady
from compliance.inputs import ExportInput, export_request_parse
from compliance.models import ExportJob
from compliance.report import CONTENT_TYPES
from compliance.serializers import ExportOutput, TemplatesOutput
from config.api import PagePagination, TenantAPIView, TenantViewSet
from config.scopes import Scope

logger = logging.getLogger(__name__)


class ExportTemplatesView(TenantAPIView):
    """GET /export/templates: the report templates with their sections and formats
    (docs/reference/reports.md)."""

    scopes = {"get": Scope.READ}

    @extend_schema(operation_id="export_templates", responses=TemplatesOutput)
    def get(self, request):
        return Response({"data": TEMPLATES})


def export_file_response(job: ExportJob) -> FileResponse:
    """A completed export's file as an attachment, with its size and SHA-256 (the API's download
    and the admin's). A completed job whose file this host's storage does not have is
    ExportNotFound saying so, not a 500: with several hosts, the usual cause is report storage
    that is not shared (docs/deploy.md)."""
    try:
        handle = services.exports_storage().open(job.file_name, "rb")
    except FileNotFoundError as exc:
        logger.error("export %s: %s is missing from the configured export storage", job.pk, job.file_name)
        raise ExportNotFound(
            f"The file of export {job.pk} is missing from the configured report storage: it was "
            "completed, but this host cannot find its file (every web host and worker must share "
            "one report storage). Tell the operator, or request the report again."
        ) from exc
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=f"trustcal-{job.template}-{job.pk}.{job.format}",
        content_type=CONTENT_TYPES[job.format],
    )
    response["Content-Length"] = str(job.size_bytes)
    response["ETag"] = f'"{job.sha256}"'
    response["X-Content-SHA256"] = job.sha256
    return response


class AnyMediaJSONRenderer(JSONRenderer):
    """Lets a client that asks for the file's type (Accept: application/pdf) reach the
    download; the file itself is a FileResponse, and problems are still JSON."""

    media_type = "*/*"


class ExportViewSet(TenantViewSet[ExportJob]):
    """Compliance exports of the caller's customer; another customer's id is a 404."""

    scopes = {"create": Scope.READ, "retrieve": Scope.READ, "list": Scope.READ, "download": Scope.READ}

    queryset = ExportJob.objects.all()
    pagination_class = PagePagination
    serializer_class = ExportOutput

    @extend_schema(request=ExportInput, responses={202: ExportOutput}, operation_id="export_create")
    def create(self, request):
        data = export_request_parse(request.data)
        job = services.export_request(
            customer=self.customer,
            template=data.template,
            format=data.format,
            start=data.start,
            end=data.end,
            time_period=data.time_period,
            filters=data.filters,
            requested_by=f"api:{request.auth.pk}" if request.auth is not None else "",
        )
        return Response(ExportOutput(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses=ExportOutput, operation_id="export_retrieve")
    def retrieve(self, request, pk=None):
        return Response(ExportOutput(self.get_object()).data)

    @extend_schema(responses=ExportOutput(many=True), operation_id="exports_list")
    def list(self, request):
        page = self.paginate_queryset(selectors.export_list(self.get_queryset()))
        return self.get_paginated_response(ExportOutput(page, many=True).data)

    @extend_schema(
        operation_id="export_download",
        responses={
            (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY),
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT),
        },
    )
    def download(self, request, pk=None):
        job = self.get_object()
        if job.status != ExportJob.Status.COMPLETED:
            raise ExportNotReady(f"Export {job.pk} is {job.status}; download it once it is completed.")
        return export_file_response(job)

    def get_renderers(self):
        if self.action == "download":
            return [JSONRenderer(), AnyMediaJSONRenderer()]
        return super().get_renderers()
