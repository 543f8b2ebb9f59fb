from config.api import router
from fairness.views import AmplificationAlertViewSet, FairnessSignalViewSet

router.register("model-fairness-signals", FairnessSignalViewSet, basename="fairness-signal")
router.register("bias/amplification", AmplificationAlertViewSet, basename="amplification-alert")

urlpatterns: list = []
