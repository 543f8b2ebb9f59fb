"""The overview panels of the staff console's home page. Each reads through the owning app's
selectors; none writes."""

import datetime as dt

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from django.utils.safestring import mark_safe

from bias import platform as bias_platform
from calibration import rules
from calibration import selectors as calibration_selectors
from compliance.platform import platform_export_list_recent
from config import heartbeat
from config.admin import count, period_text, when
from config.admin_scope import organisation_ids
from config.admin_site import changelist_url, console_panel
from console.charts import Point, line_chart_svg
from console.organisations import organisation_choices, organisation_picked
from fairness import platform as fairness_platform
from keys.models import Customer
from webhooks import platform as webhook_platform

SEVERITIES = ("critical", "high", "medium", "low")
TREND_DAYS = 60
BIAS_ALERT_DAYS = 7
TO_TRIAGE = ("open", "acknowledged")  # what fairness_platform.platform_open_alerts_by_severity counts


@console_panel(order=10, template="console/panels/alerts.html", permission="fairness.view_amplificationalert")
def open_alerts(request: HttpRequest) -> dict[str, object]:
    ids = organisation_ids(request)
    amplification = fairness_platform.platform_open_alerts_by_severity(customer_ids=ids)
    since = timezone.now() - dt.timedelta(days=BIAS_ALERT_DAYS)
    bias = bias_platform.platform_bias_alerts_by_severity(since=since, customer_ids=ids)
    rows = [
        {
            "severity": s,
            "open": amplification[s],
            # The count is of alerts still to deal with (open or acknowledged): the link lists those.
            "open_url": changelist_url(
                "fairness.amplificationalert", status__in=",".join(TO_TRIAGE), severity__exact=s
            ),
            "acknowledged_url": changelist_url(
                "fairness.amplificationalert", status__exact="acknowledged", severity__exact=s
            ),
            "bias": bias[s],
            "bias_url": changelist_url(
                "bias.biasalert", severity__exact=s, created_at__gte=since.date().isoformat()
            ),
        }
        for s in SEVERITIES
    ]
    return {
        "rows": rows,
        "total_open": sum(amplification.values()),
        "bias_days": BIAS_ALERT_DAYS,
        "all_open_url": changelist_url("fairness.amplificationalert", status__in=",".join(TO_TRIAGE)),
    }


def _selected_customer(request: HttpRequest) -> tuple[Customer | None, list[tuple[str, str]]]:
    busiest = organisation_choices(request, limit=50)
    return organisation_picked(request, busiest), busiest


@console_panel(
    order=20, template="console/panels/trend.html", permission="calibration.view_userdailyaggregate"
)
def trust_trend(request: HttpRequest) -> dict[str, object] | None:
    customer, customers = _selected_customer(request)
    if customer is None:
        return {"customer": None, "customers": customers}
    days = calibration_selectors.DayRange.last_days(TREND_DAYS)
    result = calibration_selectors.trend(customer, days=days, interval="day")
    points = [Point(p["period_start"], p["trust_score"]) for p in result["points"]]
    figures = calibration_selectors.organization_figures(customer, days=days)
    chart = line_chart_svg(points, title=f"Daily trust score of {customer.pk}, last {TREND_DAYS} days")
    window = calibration_selectors.DayRange.last_days(rules.window_days())
    return {
        "customer": customer,
        "customers": customers,
        "chart": mark_safe(chart),  # noqa: S308 (built from numbers and escaped labels)
        "direction": result["trend"]["direction"],
        "decisions": count(figures["decisions"]),
        "coverage": _pct(figures["coverage"]),
        "category": figures["category"],
        "trust_score": _num(figures["trust_score"]),
        "attainable_score": _num(figures["attainable_score"]),
        "reliance_skill": _num(figures["reliance_skill"]),
        "overtrust": _pct(figures["overtrust_rate"]),
        "undertrust": _pct(figures["undertrust_rate"]),
        "days": TREND_DAYS,
        "window_days": rules.window_days(),
        "risk_users": len(calibration_selectors.risk_users(customer, days=window)),
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _num(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.2f}"


@console_panel(order=30, template="console/panels/exports.html")
def latest_exports(request: HttpRequest) -> dict[str, object] | None:
    exports = [
        {"customer_id": job.customer_id, "template": job.template, "format": job.format, "status": job.status,
         "compliance_status": job.compliance_status, "period": period_text(job.time_period),
         # The day and the time on two lines, never broken inside ("2026-11-" / "26").
         "requested_day": when(job.created_at)[:10], "requested_time": when(job.created_at)[11:]}
        for job in platform_export_list_recent(limit=5, customer_ids=organisation_ids(request))
    ]  # fmt: skip
    return {"exports": exports}


@console_panel(order=40, template="console/panels/webhooks.html", permission="webhooks.view_webhook")
def disabled_webhooks(request: HttpRequest) -> dict[str, object]:
    return {
        "webhooks": webhook_platform.platform_webhooks_disabled_by_failures(
            limit=10, customer_ids=organisation_ids(request)
        ),
        "list_url": changelist_url("webhooks.webhook", status__exact="disabled"),
    }


@console_panel(order=50, template="console/panels/workers.html")
def worker_health(request: HttpRequest) -> dict[str, object]:
    online = heartbeat.workers_online()
    return {
        "online": online,
        "max_age": settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS,
        "workers": heartbeat.workers_recent(limit=10),
    }
