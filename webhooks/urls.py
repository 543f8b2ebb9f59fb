from django.urls import URLPattern

from config.api import router
from webhooks.views import WebhookViewSet

router.register("webhooks", WebhookViewSet, basename="webhook")

urlpatterns: list[URLPattern] = []
