from calibration.views import CalibrateView, TrustScoreTrendView, TrustScoreView
from config.api import paths

urlpatterns = [
    *paths("calibrate", CalibrateView.as_view(), "calibrate"),
    *paths("trust-score", TrustScoreView.as_view(), "trust-score"),
    *paths("trust-score/trend", TrustScoreTrendView.as_view(), "trust-score-trend"),
]
