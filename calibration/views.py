"""POST /calibrate, POST /trust-score, GET /trust-score/trend
(docs/reference/calibration.md)."""

from collections.abc import Mapping

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from audit.inputs import DecisionInput, decision_validated
from calibration import explain, selectors, services, windows
from calibration.inputs import MAX_RANGE_DAYS, TrustScoreInput
from calibration.periods import INTERVALS
from calibration.selectors import DayRange
from calibration.serializers import FIGURE_KEYS, CalibrateOutput, TrendOutput, TrustScoreOutput
from config.api import TenantAPIView, choice_param, text_param
from config.bodymodels import body_parse
from config.inputs import query_day_window
from config.scopes import Scope
from config.timeutils import isoformat


class CalibrateView(TenantAPIView):
    scopes = {"post": Scope.INGEST}

    @extend_schema(
        operation_id="calibrate",
        description="Records the decision exactly as POST /log would and answers its calibration and the user's profile.",
        request=DecisionInput,
        responses={200: CalibrateOutput},
    )
    def post(self, request: Request) -> Response:
        result = services.decision_calibrate(customer=self.customer, data=decision_validated(request.data))
        decision, profile = result.decision, result.profile
        body = {
            "decision_id": decision.decision_id,
            "entry_id": result.entry_id,
            "user_id": decision.user_id,
            "followed_ai": decision.followed_ai,
            "confidence": decision.ai_confidence,
            "calibration_category": decision.calibration_category,
            "explanation": explain.explanation(decision=decision),
            "user_profile": profile,
            "recommendations": explain.recommendations(decision=decision, profile=profile),
            "analyzed_at": isoformat(timezone.now()),
        }
        return Response(body)


class TrustScoreView(TenantAPIView):
    scopes = {"post": Scope.READ}

    @extend_schema(operation_id="trust_score", request=TrustScoreInput, responses={200: TrustScoreOutput})
    def post(self, request: Request) -> Response:
        customer = self.customer
        data = body_parse(TrustScoreInput, request.data)
        services.thresholds_record(customer)
        user_id, model_id = data.user_id, data.model_id
        window_of = data.window()
        exact = window_of.exact
        result = windows.trust_score_window(
            customer, days=DayRange(*window_of.days), exact=exact, user_id=user_id, model_id=model_id
        )
        figures, at_risk, window = result.figures, result.risk_users, result.window
        by_name: Mapping[str, object] = figures  # the served figures, read by name
        if model_id is None and exact is None:
            if user_id:
                services.risk_user_evaluate(customer=customer, user_id=user_id, figures=figures)
            else:
                services.risk_users_refresh(customer=customer, at_risk=at_risk)
        body = {
            "scope": "user" if user_id else "organization",
            "user_id": user_id or None,
            "model_id": model_id or None,
            **window,
            "decisions_analyzed": figures["decisions"],
            **{key: by_name[key] for key in FIGURE_KEYS},
            "risk_users": at_risk[: selectors.RISK_USERS_LISTED],
            "computed_at": isoformat(timezone.now()),
        }
        if not user_id:
            body["confidence_check"] = result.confidence_check
        return Response(body)


class TrustScoreTrendView(TenantAPIView):
    scopes = {"get": Scope.READ}

    @extend_schema(
        operation_id="trust_score_trend",
        parameters=[
            OpenApiParameter("user_id", str),
            OpenApiParameter("model_id", str),
            OpenApiParameter(
                "from",
                str,
                description="Date (YYYY-MM-DD, its whole UTC day) or an ISO 8601 timestamp (exact); "
                "default 29 days before `to`",
            ),
            OpenApiParameter(
                "to",
                str,
                description="Date (inclusive) or an ISO 8601 timestamp (exact, exclusive); default today",
            ),
            OpenApiParameter("interval", str, enum=INTERVALS, default="day"),
        ],
        responses={200: TrendOutput},
    )
    def get(self, request: Request) -> Response:
        interval = choice_param(request, "interval", INTERVALS, default="day")
        span = query_day_window(request, default_days=30, max_days=MAX_RANGE_DAYS)
        user_id = text_param(request, "user_id")
        model_id = text_param(request, "model_id")
        services.thresholds_record(self.customer)
        result, window = windows.trend_window(
            self.customer,
            days=DayRange(*span.days),
            exact=span.exact,
            interval=interval,
            user_id=user_id,
            model_id=model_id,
        )
        return Response({"interval": interval, **window, "user_id": user_id, "model_id": model_id, **result})
