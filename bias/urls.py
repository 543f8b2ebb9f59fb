from django.urls import URLPattern

from bias.views import BiasFeedViewSet, BiasSubgroupsViewSet, DetectBiasViewSet
from config.api import router

router.register("detect-bias", DetectBiasViewSet, basename="detect-bias")
router.register("bias/feed", BiasFeedViewSet, basename="bias-feed")
router.register("bias/subgroups", BiasSubgroupsViewSet, basename="bias-subgroups")

urlpatterns: list[URLPattern] = []
