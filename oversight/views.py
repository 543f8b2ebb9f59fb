"""GET /oversight/review-effort and GET /oversight/vigilance (docs/reference/oversight.md)."""

import datetime as dt
from collections.abc import Sequence
from typing import cast

from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.selectors import Narrow
from config.api import PagePagination, TenantAPIView
from config.filters import FilterBackend, filter_values
from config.scopes import Scope
from config.timeutils import iso8601
from oversight import rules, selectors
from oversight.filters import OversightFilters, OversightValues
from oversight.serializers import ReviewEffortOutput, VigilanceOutput


def _window(
    since: dt.datetime | None, until: dt.datetime | None, default_days: int
) -> tuple[dt.datetime, dt.datetime]:
    """[from, to): a date covers its UTC day, a timestamp is exact; `to` defaults to now (or
    `from` when that is later), `from` to `default_days` days before `to`."""
    if until is None:
        now = timezone.now()
        until = max(now, since) if since is not None else now
    if since is None:
        since = until - dt.timedelta(days=default_days)
    return since, until


def _page[Row](request: Request, view: APIView, rows: list[Row]) -> tuple[list[Row], dict[str, int]]:
    paginator = PagePagination()
    page = paginator.paginate_queryset(rows, request, view)
    return list(page or []), paginator.envelope()


class _OversightView(TenantAPIView):
    """Both oversight reports: a window (`from`, `to`, model and reviewer filters), the
    report's own figures over it, and its reviewers one page at a time."""

    scopes = {"get": Scope.READ}

    filter_backends = [FilterBackend]
    filterset_class = OversightFilters
    window_days: int

    def figures(
        self, since: dt.datetime, until: dt.datetime, *, model_id: Narrow, user_id: Narrow
    ) -> tuple[dict[str, object], Sequence[object]]:
        """The report's figures besides its reviewers, and the reviewers in order."""
        raise NotImplementedError

    def get(self, request: Request) -> Response:
        filters = cast(OversightValues, filter_values(request, self))
        since, until = _window(filters["from"], filters["to"], self.window_days)
        figures, users = self.figures(since, until, model_id=filters["model_id"], user_id=filters["user_id"])
        data, pagination = _page(request, self, list(users))
        return Response(
            {
                "from": iso8601(since),
                "to": iso8601(until),
                **figures,
                "data": data,
                "pagination": pagination,
            }
        )


@extend_schema_view(
    get=extend_schema(
        operation_id="oversight_review_effort",
        description=(
            "How long reviewers looked before deciding. Per model, the median review time of its timed "
            "decisions and the quick threshold; per reviewer, quick agreements with the AI (Wilson 95 % "
            "interval) and whether the reviewer is flagged. Probes are left out. Flagged reviewers first, "
            "then by quick_agreement_rate descending. Without `from`, the window is the "
            f"{rules.REVIEW_WINDOW_DAYS} days before `to`."
        ),
        responses={200: ReviewEffortOutput},
    )
)
class ReviewEffortView(_OversightView):
    window_days = rules.REVIEW_WINDOW_DAYS

    def figures(
        self, since: dt.datetime, until: dt.datetime, *, model_id: Narrow, user_id: Narrow
    ) -> tuple[dict[str, object], list[selectors.ReviewerEffort]]:
        effort = selectors.review_effort(
            self.customer, since=since, until=until, model_id=model_id, user_id=user_id
        )
        return {"rule": rules.rule(), "models": effort.models}, effort.users


@extend_schema_view(
    get=extend_schema(
        operation_id="oversight_vigilance",
        description=(
            "How reviewers do on probes (cases whose right answer is known): catch rate of known_wrong "
            "probes, corrected, false overrides of known_right probes, Wilson 95 % intervals, d' (log-linear "
            "correction) and the evidence level. Lowest catch_rate first. Without `from`, the window is the "
            f"{rules.VIGILANCE_WINDOW_DAYS} days before `to`."
        ),
        responses={200: VigilanceOutput},
    )
)
class VigilanceView(_OversightView):
    window_days = rules.VIGILANCE_WINDOW_DAYS

    def figures(
        self, since: dt.datetime, until: dt.datetime, *, model_id: Narrow, user_id: Narrow
    ) -> tuple[dict[str, object], list[selectors.ReviewerVigilance]]:
        result = selectors.vigilance(
            self.customer, since=since, until=until, model_id=model_id, user_id=user_id
        )
        return {"totals": result.totals}, result.users
