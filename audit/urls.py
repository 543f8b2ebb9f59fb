from audit.views import AuditTrailViewSet, LogBatchView, LogView
from config.api import paths, router

router.register("audit-trail", AuditTrailViewSet, basename="audit-trail")

urlpatterns = [
    *paths("log", LogView.as_view(), "log"),
    *paths("log/batch", LogBatchView.as_view(), "log-batch"),
]
