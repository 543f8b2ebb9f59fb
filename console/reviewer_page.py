"""The page of one reviewer (docs/reference/oversight.md, "A reviewer's page"): their calibration
figures over a chosen window, the same as POST /trust-score answers for that user_id, from and to
(read by the same function, calibration.windows), their trend (GET /trust-score/trend), their
review effort and vigilance (GET /oversight/review-effort and /oversight/vigilance with user_id),
their decisions (exactly theirs, probes marked) and their alerts. Review effort, vigilance, probe
marks and drift monitors are worker monitoring: shown only with oversight.view_reviewer_figures,
as on every other console page."""

import datetime as dt
from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from audit import selectors as audit_selectors
from audit.measures import Figures
from calibration import rules
from calibration import selectors as calibration_selectors
from calibration import windows as calibration_windows
from calibration.documents import Trend
from calibration.inputs import MAX_RANGE_DAYS
from calibration.reporting import trend_interval
from compliance.oversight_print import interval, percent, seconds
from config.admin import badge, count, score_text, when, when_stacked
from config.admin_site import console_page
from config.exceptions import DomainError
from config.inputs import days_window
from console import drift_admin
from console.charts import Point, line_chart_svg
from console.organisations import organisation_choices, organisation_picked
from keys.models import Customer
from oversight import selectors as oversight_selectors

PER_PERSON_PERMISSION = "oversight.view_reviewer_figures"
DECISIONS_SHOWN = 25


@dataclass(frozen=True)
class Window:
    days: calibration_selectors.DayRange
    since: dt.datetime  # the first day's start, UTC
    until: dt.datetime  # the day after the last day's start (exclusive)
    error: str | None  # the bounds given could not be read: the default window is shown


def _date(raw: str | None) -> dt.date | None:
    return dt.date.fromisoformat(raw) if raw else None


def window_of(request: HttpRequest) -> Window:
    """`from` and `to` as whole UTC days (both included), as POST /trust-score reads dates; the
    default is the calibration window (CALIBRATION_WINDOW_DAYS) ending today."""
    error = None
    try:
        start, end = days_window(
            _date(request.GET.get("from")),
            _date(request.GET.get("to")),
            default_days=rules.window_days(),
            max_days=MAX_RANGE_DAYS,
        )
    except (ValueError, DomainError) as exc:
        detail = getattr(exc, "errors", None) or [{"message": str(exc)}]
        error = (
            "The window was not understood ("
            + "; ".join(e["message"] for e in detail)
            + "): the default is shown."
        )
        start, end = days_window(None, None, default_days=rules.window_days())
    days = calibration_selectors.DayRange(start, end)
    since, until = calibration_windows.day_bounds(days)
    return Window(days, since, until, error)


def _pct(value: float | None) -> str:
    return "not measured" if value is None else f"{value * 100:.1f}%"


def _rate_ci(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "not measured"
    return f"{_pct(value)} ({_pct(ci[0])} to {_pct(ci[1])})" if ci else _pct(value)


# figures by name (counts, rates, intervals, labels), as the API answers them
def calibration_rows(figures: Figures) -> list[tuple[str, str, str]]:
    """(label, figure, what it means): the API's figures in the console's words."""
    return [
        ("Decisions", count(figures["decisions"]), "real decisions in the window (vigilance probes not counted)"),
        ("Scored decisions", count(figures["scored_decisions"]), "with a confidence or a known outcome"),
        ("Category", figures["category"], ""),
        ("Risk level", figures["risk_level"], ""),
        ("Trust score", score_text(figures["trust_score"]), "0 to 1: the share of decisions where following or overriding was the better act"),
        ("Attainable score", score_text(figures["attainable_score"]), "what following the AI exactly when it was more likely right would reach"),
        ("Reliance gap", score_text(figures["reliance_gap"]), "attainable minus trust score"),
        ("Agreement", _pct(figures["agreement_rate"]), "followed the AI"),
        ("Over-trust rate", _rate_ci(figures["overtrust_rate"], figures["overtrust_rate_ci"]), "followed where the AI was more likely wrong, 95% interval"),
        ("Under-trust rate", _rate_ci(figures["undertrust_rate"], figures["undertrust_rate_ci"]), "overrode where the AI was more likely right, 95% interval"),
        ("Mean AI confidence", _pct(figures["mean_ai_confidence"]), ""),
        ("Outcomes known", count(figures["outcomes_known"]), ""),
        ("Followed AI errors", count(figures["followed_ai_errors"]), "followed without a confidence where the outcome shows the AI wrong"),
    ]  # fmt: skip


def trend_context(trend: Trend, interval_name: str, user_id: str) -> dict[str, object]:
    points = trend["points"]
    chart = line_chart_svg(
        [Point(p["period_start"], p["trust_score"]) for p in points],
        title=f"Trust score of {user_id} per {interval_name}",
    )
    summary = trend["trend"]
    slope = summary["slope"]
    return {
        "chart": mark_safe(chart),  # noqa: S308 (built from numbers and escaped labels)
        "direction": summary["direction"],
        "slope": "not fitted" if slope is None else f"{slope * 100:+.2f} points per {interval_name}",
        "fitted": summary["periods_fitted"],
        "rows": [
            {
                "start": p["period_start"],
                "decisions": count(p["decisions"]),
                "trust_score": score_text(p["trust_score"]),
                "reliance_gap": score_text(p["reliance_gap"]),
                "agreement": _pct(p["agreement_rate"]),
                "overtrust": count(p["overtrust_count"]),
            }
            for p in points
            if p["decisions"]
        ],
    }


def _effort(customer: Customer, user_id: str, window: Window) -> dict[str, object] | None:
    effort = oversight_selectors.review_effort(
        customer, since=window.since, until=window.until, user_id=user_id
    )
    row = next((u for u in effort.users if u["user_id"] == user_id), None)
    if row is None:
        return None
    return {
        "flagged": row["flagged"],
        "rows": [
            ("Decisions", count(row["decisions"])),
            ("Timed decisions", count(row["timed_decisions"])),
            ("Median review time", seconds(row["median_review_seconds"], "none timed")),
            ("Quick agreements", f"{count(row['quick_agreements'])} of {count(row['timed_decisions'])} timed"),
            ("Quick-agreement rate", f"{percent(row['quick_agreement_rate'], 'none timed')} "
                                     f"({interval(row['quick_agreement_rate_ci'], 'none timed')})"),
            ("Over-reliance when quick", percent(row["overreliance_when_quick"], "no quick decision with the AI wrong")),
            ("Over-reliance when considered", percent(row["overreliance_when_considered"], "no considered decision with the AI wrong")),
        ],
    }  # fmt: skip


def _vigilance(customer: Customer, user_id: str, window: Window) -> dict[str, object] | None:
    result = oversight_selectors.vigilance(customer, since=window.since, until=window.until, user_id=user_id)
    row = next((u for u in result.users if u["user_id"] == user_id), None)
    if row is None:
        return None
    reason = "no known_wrong probe"
    return {
        "evidence": row["evidence"],
        "rows": [
            ("Probes", count(row["probes"])),
            ("Known-wrong probes caught", f"{count(row['caught'])} of {count(row['known_wrong'])}"),
            ("Catch rate", f"{percent(row['catch_rate'], reason)} ({interval(row['catch_rate_ci'], reason)})"
                           if row["catch_rate"] is not None else percent(None, reason)),
            ("Caught and corrected", count(row["corrected"])),
            ("Known-right probes overridden", f"{count(row['false_overrides'])} of {count(row['known_right'])}"),
            ("d'", "not measured: needs probes of both kinds" if row["d_prime"] is None else f"{row['d_prime']:.2f}"),
            ("Evidence", row["evidence"]),
        ],
    }  # fmt: skip


def decisions_url(customer_id: str, user_id: str, window: Window) -> str:
    """The decision list filtered exactly on this reviewer and the window's days."""
    query = {
        "customer__id__exact": customer_id,
        "user_id": user_id,
        "timestamp__gte": window.days.start.isoformat(),
        "timestamp__lt": (window.days.end + dt.timedelta(days=1)).isoformat(),
    }
    return f"{reverse('admin:audit_decision_changelist')}?{urlencode(query)}"


def _decision_rows(customer: Customer, user_id: str, window: Window, per_person: bool) -> dict[str, object]:
    """The reviewer's decisions of the window, newest first, probes included. Probe marks are
    per-person figures: without the permission the rows are unmarked, as the decision list shows
    them."""
    rows = audit_selectors.reviewer_decisions(
        customer, user_id=user_id, since=window.since, until=window.until
    )
    shown = []
    for d in rows[:DECISIONS_SHOWN]:
        url = reverse("admin:audit_decision_change", args=[d.pk])
        shown.append(
            {
                "link": format_html('<a href="{}">{}</a>', url, d.decision_id),
                "when": when_stacked(d.timestamp),
                "model": d.model_id or "-",
                "ai": d.ai_recommendation,
                "confidence": "no confidence" if d.ai_confidence is None else f"{d.ai_confidence * 100:.0f}%",
                "decision": d.user_decision,
                "outcome": d.outcome or "-",
                "category": d.get_calibration_category_display(),
                "probe": (d.probe_kind or "").replace("_", " ") if per_person else "",
            }
        )
    total = rows.count()
    probes = rows.filter(probe_kind__isnull=False).count() if per_person else None
    return {
        "total": total,
        "probes": probes,
        "rows": shown,
        "url": decisions_url(customer.pk, user_id, window),
    }


def _alerts(customer: Customer, user_id: str, per_person: bool) -> dict[str, object]:
    risk = calibration_selectors.risk_user_state(customer, user_id)
    context: dict[str, object] = {
        "risk": None
        if risk is None
        else {
            "at_risk": risk.at_risk,
            "score": score_text(risk.trust_score),
            "identified": when(risk.last_identified_at),
            "updated": when(risk.updated_at),
        }
    }
    if per_person:
        stamp = oversight_selectors.rubber_stamp_state(customer, user_id)
        context["rubber_stamp"] = None if stamp is None else {
            "flagged": stamp.flagged,
            "rate": _pct(stamp.quick_agreement_rate),
            "fired": when(stamp.last_fired_at),
        }  # fmt: skip
        monitors, alarms = drift_admin.reviewer_drift(customer.pk, user_id)
        context["monitors"] = [
            {
                "link": format_html(
                    '<a href="{}">{}</a>', reverse("admin:drift_driftmonitor_change", args=[m.pk]), m.name
                ),
                "chart": m.chart.replace("_", " "),
                "model": m.model_id or "every model",
                "status": badge(m.status),
                "alarms": count(m.alarms_raised),
            }
            for m in monitors
        ]
        context["alarms"] = [
            {
                "link": format_html('<a href="{}">{}</a>', reverse("admin:drift_driftalarm_change", args=[a.pk]), a.pk),
                "chart": a.chart.replace("_", " "),
                "severity": badge(a.severity),
                "status": badge(a.status),
                "raised": when(a.raised_at),
                "disposition": (a.disposition or "-").replace("_", " "),
            }
            for a in alarms
        ]  # fmt: skip
    return context


@console_page(name="reviewer", title="Reviewer", permission="calibration.view_userdailyaggregate")
def reviewer(request: HttpRequest) -> HttpResponse:
    customers = organisation_choices(request, limit=200)
    customer = organisation_picked(request, customers)
    user_id = (request.GET.get("user") or "").strip()
    window = window_of(request)
    per_person = request.user.has_perm(PER_PERSON_PERMISSION)
    context: dict[str, object] = {
        **admin.site.each_context(request),
        "title": f"Reviewer {user_id}" if user_id else "Reviewer",
        "subtitle": None,
        "customers": customers,
        "customer": customer,
        "user_id": user_id,
        "window": window,
        "period": f"{window.days.start.isoformat()} to {window.days.end.isoformat()}",
        "per_person": per_person,
        "today": timezone.now().date().isoformat(),
    }
    if customer is not None and user_id:
        scored = calibration_windows.trust_score_window(
            customer, days=window.days, exact=None, user_id=user_id, model_id=None
        )
        interval_name = trend_interval(window.days.start, window.days.end)
        trend, _ = calibration_windows.trend_window(
            customer, days=window.days, exact=None, interval=interval_name, user_id=user_id, model_id=None
        )
        context.update(
            figures=calibration_rows(scored.figures),
            recalibrated=scored.figures["confidence_recalibrated"],
            trend=trend_context(trend, interval_name, user_id),
            interval=interval_name,
            decisions=_decision_rows(customer, user_id, window, per_person),
            alerts=_alerts(customer, user_id, per_person),
        )
        if per_person:
            context.update(
                effort=_effort(customer, user_id, window), vigilance=_vigilance(customer, user_id, window)
            )
    request.current_app = admin.site.name
    return TemplateResponse(request, "console/admin/reviewer.html", context)
