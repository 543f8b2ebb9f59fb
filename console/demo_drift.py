"""The demo's drift monitors (docs/reference/drift.md), created (back-dated) before the loan desk's
first decision, so every decision and probe is their point: the organisation's reliance on the AI
against its first 200 decisions, the older model version's calibration (v2.2 was right more often
than its low confidence said, so that chart alarms within its month), the vigilance probes' SPRT
of the whole desk, and one probe SPRT per reviewer, which concludes `h1` (an alarm) for the
over-trusting reviewers in the older month's probe programme. The desk's decisions are logged day
by day at the time they were made, so each alarm is raised on its day; the probe alarms raised in
the older month's first ACK_WITHIN_DAYS days are acknowledged the next day with a disposition, the
rest stay open for the console and the reports."""

import datetime as dt

from config.bodymodels import body_parse
from console import demo_data
from drift import reporting as drift_reporting
from drift import selectors as drift_selectors
from drift import services as drift_services
from drift.inputs import AcknowledgeInput, MonitorCreateInput
from keys.models import Customer

MONITORS: list[dict[str, object]] = [
    {"name": "Desk reliance on the AI", "chart": "over_reliance", "scope": "organization", "model_id": demo_data.MODEL,
     "baseline": {"mode": "next", "decisions": 200}, "h": 5.0},
    {"name": "v2.2 right more often than it says", "chart": "ai_calibration_down", "scope": "organization",
     "model_id": demo_data.MODEL, "model_version": "2.2", "h": 5.0},
    {"name": "v2.2 wrong more often than it says", "chart": "ai_calibration_up", "scope": "organization",
     "model_id": demo_data.MODEL, "model_version": "2.2", "h": 5.0},
    {"name": "Vigilance probes, whole desk", "chart": "probe_sprt", "scope": "organization"},
]  # fmt: skip
ACK_WITHIN_DAYS = 20  # probe alarms raised in the older month's first 20 days are acknowledged
DISPOSITIONS = {
    "organization": ("reviewer_coached", "Probe misses traced to the over-trusting officers; coached."),
    "user": ("reviewer_coached", "Missed known wrong cases; went through them with the desk lead."),
}


def monitor_bodies() -> list[dict[str, object]]:
    """The organisation's monitors, then a probe SPRT for each reviewer."""
    reviewers: list[dict[str, object]] = [
        {
            "name": f"Vigilance probes, {r.user_id}",
            "chart": "probe_sprt",
            "scope": "user",
            "user_id": r.user_id,
        }
        for r in demo_data.reviewers()
    ]
    return MONITORS + reviewers


def create_monitors(customer: Customer, *, at: dt.datetime) -> str:
    bodies = monitor_bodies()
    for body in bodies:
        drift_services.monitor_create(customer=customer, body=body_parse(MonitorCreateInput, body), at=at)
    return (
        f"Drift monitors: {len(bodies)} ({', '.join(str(m['name']) for m in MONITORS)}, and a vigilance-probe "
        f"test for each of the {len(bodies) - len(MONITORS)} reviewers), created before the first decision."
    )


def acknowledge_due(customer: Customer, actor: str, *, at: dt.datetime, older_first: dt.date) -> None:
    """Acknowledge, at `at`, the open probe alarms raised at least a day before it within the
    older month's first ACK_WITHIN_DAYS days."""
    last = dt.datetime.combine(older_first, dt.time(), tzinfo=dt.UTC) + dt.timedelta(days=ACK_WITHIN_DAYS)
    for alarm in drift_reporting.open_alarms(customer):
        if (
            alarm.chart != "probe_sprt"
            or alarm.raised_at >= last
            or alarm.raised_at > at - dt.timedelta(days=1)
        ):
            continue
        disposition, note = DISPOSITIONS["user" if alarm.user_id else "organization"]
        body = body_parse(AcknowledgeInput, {"disposition": disposition, "note": note})
        drift_services.alarm_acknowledge(alarm=alarm, body=body, default_by=actor, at=at)


def alarms_line(customer: Customer, months: tuple[tuple[dt.date, dt.date], ...]) -> str:
    """One line for the demo's report: the alarms raised in each month, by chart, and how many
    were acknowledged."""
    alarms = drift_selectors.alarms(customer)
    parts = []
    for name, (first, last) in zip(("older", "recent"), months, strict=True):
        own = [a for a in alarms if first <= a.raised_at.astimezone(dt.UTC).date() <= last]
        by_chart: dict[str, int] = {}
        for alarm in own:
            key = f"{alarm.chart}{' (' + alarm.user_id + ')' if alarm.user_id else ''}"
            by_chart[key] = by_chart.get(key, 0) + 1
        counts = (
            ", ".join(f"{n} {chart}" if n > 1 else chart for chart, n in sorted(by_chart.items())) or "none"
        )
        acknowledged = sum(1 for a in own if a.status == "acknowledged")
        parts.append(f"{name} month {len(own)} ({counts}; {acknowledged} acknowledged)")
    return f"Drift alarms raised: {'; '.join(parts)}."
