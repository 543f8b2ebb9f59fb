from django.urls import path, register_converter

from compliance.profile_views import SystemProfileListView, SystemProfileView
from compliance.views import ExportTemplatesView, ExportViewSet
from config.api import paths


class ModelIdConverter:
    """A model id as its decisions carry it: any characters but control ones, `/` included
    (percent-encoded or not; docs/reference/system-profiles.md). One trailing slash is the
    optional slash of every path, not part of the id."""

    regex = r"[^\x00-\x1f\x7f]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ModelIdConverter, "model")
profile_view = SystemProfileView.as_view()

# Explicit paths rather than the router: the list lives at /exports, the job at /export/:id.
export_create = ExportViewSet.as_view({"post": "create"})
export_detail = ExportViewSet.as_view({"get": "retrieve"})
export_download = ExportViewSet.as_view({"get": "download"})
exports_list = ExportViewSet.as_view({"get": "list"})

urlpatterns = [
    *paths("export", export_create, "export-create"),
    *paths("export/templates", ExportTemplatesView.as_view(), "export-templates"),
    *paths("export/<id:pk>", export_detail, "export-detail"),
    *paths("export/<id:pk>/download", export_download, "export-download"),
    *paths("exports", exports_list, "exports-list"),
    *paths("system-profiles", SystemProfileListView.as_view(), "system-profiles"),
    # The slashed form first, so that a trailing slash is never taken into the model id.
    path("system-profiles/<model:model_id>/", profile_view),
    path("system-profiles/<model:model_id>", profile_view, name="system-profile"),
]
