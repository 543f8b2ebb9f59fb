from django.urls import URLPattern

from config.api import router
from keys.views import AdminAuditLogViewSet, ApiKeyAdminViewSet

router.register("admin/api-keys", ApiKeyAdminViewSet, basename="api-key")
router.register("admin/audit-log", AdminAuditLogViewSet, basename="admin-audit-log")

urlpatterns: list[URLPattern] = []
