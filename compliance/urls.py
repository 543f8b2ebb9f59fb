from compliance.views import ExportTemplatesView, ExportViewSet
from config.api import paths

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
]
