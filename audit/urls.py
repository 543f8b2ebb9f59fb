from audit.views import AuditTrailViewSet, LogView
from config.api import paths, router

router.register("audit-trail", AuditTrailViewSet, basename="audit-trail")

urlpatterns = [*paths("log", LogView.as_view(), "log")]
