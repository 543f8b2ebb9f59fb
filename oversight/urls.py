from config.api import paths
from oversight.views import ReviewEffortView, VigilanceView

urlpatterns = [
    *paths("oversight/review-effort", ReviewEffortView.as_view(), "oversight-review-effort"),
    *paths("oversight/vigilance", VigilanceView.as_view(), "oversight-vigilance"),
]
