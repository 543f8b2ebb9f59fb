"""POST /calibrate, POST /trust-score, GET /trust-score/trend
(docs/reference/calibration.md)."""

import datetime as dt
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from audit import selectors as audit_selectors
from audit.inputs import DecisionInput, decision_validated
from calibration import explain, reporting, selectors, services
from calibration.inputs import MAX_RANGE_DAYS, TrustScoreInput
from calibration.periods import INTERVALS
from calibration.selectors import DayRange
from calibration.serializers import FIGURE_KEYS, CalibrateOutput, TrendOutput, TrustScoreOutput
from config.api import TenantAPIView, choice_param, text_param
from config.bodymodels import body_parse
from config.inputs import query_day_window
from config.scopes import Scope
from config.timeutils import iso8601, isoformat
from keys.models import Customer

if TYPE_CHECKING:
    from audit.models import Decision


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
        exact, days = window_of.exact, DayRange(*window_of.days)
        window: dict[str, str | None] = dict(days.as_dict())
        at_risk: list[dict[str, Any]] = []
        span = exact or _day_bounds(days)
        # The confidence check over the organisation's decisions of the window and model filter;
        # when it rejects, every confidence-based figure is judged with the recalibrated p'.
        check, recalibrate = reporting.recalibration_for(
            _decisions(customer, span, user_id=None, model_id=model_id)
        )
        if exact is not None or recalibrate is not None:
            # A bound inside a day or a recalibrated confidence: from the decisions of the window.
            decisions = _decisions(customer, span, user_id=user_id, model_id=model_id)
            figures, at_risk = reporting.exact_figures(
                decisions, user_id=user_id or None, recalibrate=recalibrate
            )
            if exact is not None:
                window = {"from": iso8601(exact[0]), "to": iso8601(exact[1])}
        elif user_id:
            figures = selectors.user_profile(customer, user_id=user_id, days=days, model_id=model_id)
        else:
            organization = selectors.organization_window(customer, days=days, model_id=model_id)
            figures, at_risk = organization.figures, organization.risk_users
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
            **{key: figures[key] for key in FIGURE_KEYS},
            "risk_users": at_risk[: selectors.RISK_USERS_LISTED],
            "computed_at": isoformat(timezone.now()),
        }
        if not user_id:
            body["confidence_check"] = check
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
        bounds = span.exact or _day_bounds(DayRange(*span.days))
        services.thresholds_record(self.customer)
        # A trend fits the confidence check once over its whole window, like the AI's accuracy.
        _, recalibrate = reporting.recalibration_for(
            _decisions(self.customer, bounds, user_id=None, model_id=model_id)
        )
        if span.exact is not None or recalibrate is not None:
            # A bound inside a day (the edge periods hold only the decisions inside the window, and
            # are not fitted) or a recalibrated confidence: from the decisions of the window.
            decisions = _decisions(self.customer, bounds, user_id=user_id, model_id=model_id)
            first = bounds[0].date() if span.exact is None else _next_day(bounds[0])
            last = (bounds[1] - dt.timedelta(microseconds=1)).date()
            result = reporting.trust_trend(
                decisions,
                start=bounds[0].date(),
                end=last,
                interval=interval,
                recalibrate=recalibrate,
                first=first,
                last=last
                if span.exact is None or bounds[1].time() == dt.time.min
                else last - dt.timedelta(days=1),
            )
            result.pop("interval")
            if span.exact is not None:
                window: dict[str, str | None] = {"from": iso8601(span.exact[0]), "to": iso8601(span.exact[1])}
            else:
                window = dict(DayRange(*span.days).as_dict())
        else:
            days = DayRange(*span.days)
            result = selectors.trend(
                self.customer, days=days, interval=interval, user_id=user_id, model_id=model_id
            )
            window = dict(days.as_dict())
        return Response({"interval": interval, **window, "user_id": user_id, "model_id": model_id, **result})


def _decisions(
    customer: Customer, window: tuple[dt.datetime, dt.datetime], *, user_id: str | None, model_id: str | None
) -> "QuerySet[Decision]":
    return audit_selectors.decision_set(
        customer,
        since=window[0],
        until=window[1],
        user_ids=[user_id] if user_id else None,
        model_ids=[model_id] if model_id else None,
    )


def _next_day(instant: dt.datetime) -> dt.date:
    """The first whole day at or after `instant` (UTC)."""
    day = instant.astimezone(dt.UTC).date()
    return day if instant.astimezone(dt.UTC).time() == dt.time.min else day + dt.timedelta(days=1)


def _day_bounds(days: DayRange) -> tuple[dt.datetime, dt.datetime]:
    """The instants [start of the first day, start of the day after the last) in UTC."""
    start = dt.datetime.combine(days.start, dt.time.min, tzinfo=dt.UTC)
    if days.end >= dt.date.max:  # the day after 9999-12-31 is not a date: its last instant ends it
        return start, dt.datetime.max.replace(tzinfo=dt.UTC)
    return start, start + dt.timedelta(days=(days.end - days.start).days + 1)
