"""GET /oversight/review-effort and GET /oversight/vigilance (docs/reference/oversight.md)."""

import datetime as dt
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from config.api import PagePagination, TenantAPIView, text_param
from config.inputs import query_time_range
from config.timeutils import isoformat
from oversight import rules, selectors
from oversight.serializers import ReviewEffortOutput, VigilanceOutput


def _window(request: Any, default_days: int) -> tuple[dt.datetime, dt.datetime]:
    """[from, to): a date covers its UTC day, a timestamp is exact; `to` defaults to now (or
    `from` when that is later), `from` to `default_days` days before `to`."""
    since, until = query_time_range(request)
    if until is None:
        now = timezone.now()
        until = max(now, since) if since is not None else now
    if since is None:
        since = until - dt.timedelta(days=default_days)
    return since, until


def _parameters(default_days: int) -> list[OpenApiParameter]:
    bound = "Date (YYYY-MM-DD, inclusive) or ISO 8601; the decision's timestamp"
    return [
        OpenApiParameter("from", str, description=f"{bound}; default {default_days} days before `to`"),
        OpenApiParameter("to", str, description=f"{bound}; default now"),
        OpenApiParameter("model_id", str),
        OpenApiParameter("user_id", str),
    ]


def _page(request: Any, view: Any, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    paginator = PagePagination()
    page = paginator.paginate_queryset(rows, request, view)
    return list(page or []), paginator.envelope()


class ReviewEffortView(TenantAPIView):
    @extend_schema(
        operation_id="oversight_review_effort",
        description=(
            "How long reviewers looked before deciding. Per model, the median review time of its timed "
            "decisions and the quick threshold; per reviewer, quick agreements with the AI (Wilson 95 % "
            "interval) and whether the reviewer is flagged. Probes are left out. Flagged reviewers first, "
            "then by quick_agreement_rate descending."
        ),
        parameters=_parameters(rules.REVIEW_WINDOW_DAYS),
        responses={200: ReviewEffortOutput},
    )
    def get(self, request):
        since, until = _window(request, rules.REVIEW_WINDOW_DAYS)
        effort = selectors.review_effort(
            self.customer,
            since=since,
            until=until,
            model_id=text_param(request, "model_id"),
            user_id=text_param(request, "user_id"),
        )
        data, pagination = _page(request, self, effort.users)
        return Response(
            {
                "from": isoformat(since),
                "to": isoformat(until),
                "rule": rules.rule(),
                "models": effort.models,
                "data": data,
                "pagination": pagination,
            }
        )


class VigilanceView(TenantAPIView):
    @extend_schema(
        operation_id="oversight_vigilance",
        description=(
            "How reviewers do on probes (cases whose right answer is known): catch rate of known_wrong "
            "probes, corrected, false overrides of known_right probes, Wilson 95 % intervals, d' (log-linear "
            "correction) and the evidence level. Lowest catch_rate first."
        ),
        parameters=_parameters(rules.VIGILANCE_WINDOW_DAYS),
        responses={200: VigilanceOutput},
    )
    def get(self, request):
        since, until = _window(request, rules.VIGILANCE_WINDOW_DAYS)
        result = selectors.vigilance(
            self.customer,
            since=since,
            until=until,
            model_id=text_param(request, "model_id"),
            user_id=text_param(request, "user_id"),
        )
        data, pagination = _page(request, self, result.users)
        return Response(
            {
                "from": isoformat(since),
                "to": isoformat(until),
                "totals": result.totals,
                "data": data,
                "pagination": pagination,
            }
        )
