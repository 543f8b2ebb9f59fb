from compliance.views import ExportTemplatesView
from config.api import paths

urlpatterns = [
    *paths("export/templates", ExportTemplatesView.as_view(), "export-templates"),
]
