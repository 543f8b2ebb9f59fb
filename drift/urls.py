from django.urls import URLPattern, URLResolver

from config.api import router
from drift.views import DriftAlarmViewSet, DriftMonitorViewSet

router.register("drift-monitors", DriftMonitorViewSet, basename="drift-monitor")
router.register("drift-alarms", DriftAlarmViewSet, basename="drift-alarm")

urlpatterns: list[URLPattern | URLResolver] = []
