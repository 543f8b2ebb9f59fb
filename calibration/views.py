"""POST /calibrate, POST /trust-score, GET /trust-score/trend (C6)."""

import datetime as dt

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import services as audit_services
from audit.serializers import DecisionInput
from audit.views import text_param, validated_decision
from calibration import explain, rules, selectors, services
from calibration.selectors import INTERVALS, DayRange
from calibration.serializers import (
    MAX_RANGE_DAYS,
    CalibrateOutput,
    TrendOutput,
    TrustScoreInput,
    TrustScoreOutput,
)
from config.api import choice_param, require_object
from config.exceptions import ValidationFailed
from config.timeutils import isoformat, parse_day


class CalibrateView(APIView):
    @extend_schema(
        operation_id="calibrate",
        description="Records the decision exactly as POST /log would and answers its calibration and the user's profile.",
        request=DecisionInput,
        responses={200: CalibrateOutput},
    )
    def post(self, request):
        customer = request.user.customer
        result = audit_services.decision_log(
            customer=customer, data=validated_decision(request.data), source="calibrate"
        )
        decision = result.decision
        profile = selectors.user_profile(customer, user_id=decision.user_id)
        services.risk_user_evaluate(customer=customer, user_id=decision.user_id, figures=profile)
        body = {
            "decision_id": decision.decision_id,
            "entry_id": result.entry.id,
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


def _days(start: dt.date | None, end: dt.date | None, default_days: int) -> DayRange:
    today = timezone.now().date()
    if start is None and end is None:
        return DayRange.last_days(default_days, today=today)
    if end is None:
        end = max(start or today, today)
    if start is None:
        start = end - dt.timedelta(days=default_days - 1)
    return DayRange(start, end)


class TrustScoreView(APIView):
    @extend_schema(operation_id="trust_score", request=TrustScoreInput, responses={200: TrustScoreOutput})
    def post(self, request):
        customer = request.user.customer
        data = TrustScoreInput(data=require_object(request.data))
        data.is_valid(raise_exception=True)
        user_id = data.validated_data.get("user_id")
        model_id = data.validated_data.get("model_id")
        days = _days(data.validated_data.get("from"), data.validated_data.get("to"), rules.window_days())
        if days.start > days.end:
            raise ValidationFailed(
                "`from` must not be after `to`.", errors=[{"field": "from", "message": "after to"}]
            )
        if user_id:
            figures = selectors.user_profile(customer, user_id=user_id, days=days, model_id=model_id)
            at_risk: list = []
            if model_id is None:
                services.risk_user_evaluate(customer=customer, user_id=user_id, figures=figures)
        else:
            figures = selectors.organization_figures(customer, days=days, model_id=model_id)
            at_risk = selectors.risk_users(customer, days=days, model_id=model_id)
            if model_id is None:
                services.risk_users_refresh(customer=customer, at_risk=at_risk)
        body = {
            "scope": "user" if user_id else "organization",
            "user_id": user_id or None,
            "model_id": model_id or None,
            **days.as_dict(),
            "trust_score": figures["trust_score"],
            "category": figures["category"],
            "risk_level": figures["risk_level"],
            "decisions_analyzed": figures["decisions"],
            "agreement_rate": figures["agreement_rate"],
            "override_rate": figures["override_rate"],
            "overtrust_rate": figures["overtrust_rate"],
            "undertrust_rate": figures["undertrust_rate"],
            "mean_ai_confidence": figures["mean_ai_confidence"],
            "calibration_gap": figures["calibration_gap"],
            "overreliance_rate": figures["overreliance_rate"],
            "underreliance_rate": figures["underreliance_rate"],
            "switch_rate": figures["switch_rate"],
            "rair": figures["rair"],
            "rsr": figures["rsr"],
            "risk_users": at_risk,
            "computed_at": isoformat(timezone.now()),
        }
        return Response(body)


def _query_day(request, name: str) -> dt.date | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    day = parse_day(raw)
    if day is None:
        raise ValidationFailed(
            f"{name} must be a date (YYYY-MM-DD) or an ISO 8601 timestamp.",
            errors=[{"field": name, "message": "not a date or ISO 8601 timestamp"}],
        )
    return day


class TrustScoreTrendView(APIView):
    @extend_schema(
        operation_id="trust_score_trend",
        parameters=[
            OpenApiParameter("user_id", str),
            OpenApiParameter("model_id", str),
            OpenApiParameter(
                "from", str, description="Date (YYYY-MM-DD) or ISO 8601; default 29 days before `to`"
            ),
            OpenApiParameter("to", str, description="Date (YYYY-MM-DD) or ISO 8601; default today"),
            OpenApiParameter("interval", str, enum=INTERVALS, default="day"),
        ],
        responses={200: TrendOutput},
    )
    def get(self, request):
        interval = choice_param(request, "interval", INTERVALS, default="day")
        days = _days(_query_day(request, "from"), _query_day(request, "to"), 30)
        if days.start > days.end:
            raise ValidationFailed(
                "`from` must not be after `to`.", errors=[{"field": "from", "message": "after to"}]
            )
        if (days.end - days.start).days > MAX_RANGE_DAYS:
            raise ValidationFailed(
                f"The range is limited to {MAX_RANGE_DAYS} days.",
                errors=[{"field": "from", "message": f"at most {MAX_RANGE_DAYS} days before to"}],
            )
        user_id = text_param(request, "user_id")
        model_id = text_param(request, "model_id")
        result = selectors.trend(
            request.user.customer, days=days, interval=interval, user_id=user_id, model_id=model_id
        )
        return Response(
            {"interval": interval, **days.as_dict(), "user_id": user_id, "model_id": model_id, **result}
        )
