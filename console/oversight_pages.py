"""The Oversight group's pages: review effort and vigilance. The team's figures for every officer
who may see oversight; the rows per reviewer (worker monitoring) only with
oversight.view_reviewer_figures, which the "oversight per-person figures" group holds."""

import datetime as dt
from dataclasses import dataclass

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from compliance.oversight_print import interval, percent
from config.admin import reviewer_window_url
from config.admin_site import console_page
from config.inputs import lenient_choice
from console.organisations import organisation_choices, organisation_picked
from keys.models import Customer
from oversight import selectors as oversight_selectors

TEAM_PERMISSION = "oversight.view_team_figures"
PER_PERSON_PERMISSION = "oversight.view_reviewer_figures"
REVIEW_WINDOWS = (30, 90)
VIGILANCE_WINDOWS = (90, 30, 365)


@dataclass(frozen=True)
class Page:
    """The organisation and window a page shows, and its template context."""

    customer: Customer | None
    window: int  # days
    per_person: bool
    context: dict[str, object]


def _page(request: HttpRequest, windows: tuple[int, ...], title: str) -> Page:
    customers = organisation_choices(request, limit=200)
    customer = organisation_picked(request, customers)
    window = lenient_choice(request.GET.get("days"), windows)
    per_person = request.user.has_perm(PER_PERSON_PERMISSION)
    return Page(
        customer,
        window,
        per_person,
        {
            **admin.site.each_context(request),
            "title": title,
            "subtitle": None,
            "customers": customers,
            "customer": customer,
            "window": window,
            "windows": windows,
            "per_person": per_person,
        },
    )


def _rate(value: float | None, ci: list[float] | None, reason: str) -> str:
    """A rate and its 95% interval as percentages with one decimal."""
    if value is None:
        return f"not measured ({reason})"
    return f"{percent(value, reason)} ({interval(ci, reason)})"


def _share(value: float | None) -> str:
    return "\N{EN DASH}" if value is None else percent(value, "")


def _utc_days(page: Page) -> tuple[dt.datetime, dt.datetime, tuple[dt.date, dt.date]]:
    """The window as whole UTC days ending today, as a report's period: "last 30 days" here is
    the figures of a report from 29 days ago to today. (since, until, its first and last day)"""
    until = timezone.now().astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    until += dt.timedelta(days=1)
    since = until - dt.timedelta(days=page.window)
    last = until - dt.timedelta(days=1)
    page.context["period"] = f"{since.date().isoformat()} to {last.date().isoformat()}"
    days = (since.date(), last.date())
    page.context["days"] = days
    return since, until, days


def _render(request: HttpRequest, template: str, context: dict[str, object]) -> HttpResponse:
    request.current_app = admin.site.name
    return TemplateResponse(request, template, context)


@console_page(
    name="review-effort", title="Review effort (rubber-stamp detection)", permission=TEAM_PERMISSION
)
def review_effort(request: HttpRequest) -> HttpResponse:
    page = _page(request, REVIEW_WINDOWS, "Review effort")
    context, customer = page.context, page.customer
    if customer is not None:
        since, until, days = _utc_days(page)
        effort = oversight_selectors.review_effort(customer, since=since, until=until)
        team = effort.team()
        rate_text = _rate(team["quick_agreement_rate"], team["quick_agreement_rate_ci"], "no timed decision")
        context.update(team={**team, "rate_text": rate_text}, models=effort.models)
        context["reviewers"] = (
            [
                {
                    **u,
                    "page": reviewer_window_url(customer.pk, u["user_id"], *days),
                    "rate_text": _rate(u["quick_agreement_rate"], u["quick_agreement_rate_ci"], "none timed"),
                    "quick_text": _share(u["overreliance_when_quick"]),
                    "considered_text": _share(u["overreliance_when_considered"]),
                }
                for u in effort.users
            ]
            if page.per_person
            else []
        )
    return _render(request, "console/admin/review_effort.html", context)


@console_page(name="vigilance", title="Vigilance probes (known cases)", permission=TEAM_PERMISSION)
def vigilance(request: HttpRequest) -> HttpResponse:
    page = _page(request, VIGILANCE_WINDOWS, "Vigilance probes")
    context, customer = page.context, page.customer
    if customer is not None:
        since, until, days = _utc_days(page)
        result = oversight_selectors.vigilance(customer, since=since, until=until)
        totals = result.totals
        context["totals"] = {
            **totals,
            "rate_text": _rate(totals["catch_rate"], totals["catch_rate_ci"], "no known_wrong probe"),
            "false_text": _share(totals["false_override_rate"]),
        }
        context["reviewers"] = (
            [
                {
                    **u,
                    "page": reviewer_window_url(customer.pk, u["user_id"], *days),
                    "rate_text": _rate(u["catch_rate"], u["catch_rate_ci"], "no known_wrong probe"),
                }
                for u in result.users
            ]
            if page.per_person
            else []
        )
        context["by_evidence"] = [
            (level, sum(1 for u in result.users if u["evidence"] == level))
            for level in ("sufficient", "indicative", "insufficient")
        ]
        context["probed_reviewers"] = len(result.users)
    return _render(request, "console/admin/vigilance.html", context)
