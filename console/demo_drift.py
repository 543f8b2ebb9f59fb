"""The demo's drift monitors (docs/reference/drift.md), created through the API's service before
the loan desk's decisions are logged, so the decisions are their points: the organisation's
reliance on the AI against its first 200 decisions, the older model version's calibration
(v2.2 was right more often than its low confidence said, so that chart alarms within its month),
and the vigilance probes' SPRT, whose misses come mostly from the over-trusting reviewers. After
the probes, the SPRT's alarm is acknowledged with a disposition; the calibration alarm stays
open for the console and the reports."""

from typing import Any

from config.bodymodels import body_parse
from console import demo_data
from drift import reporting as drift_reporting
from drift import services as drift_services
from drift.inputs import AcknowledgeInput, MonitorCreateInput
from keys.models import Customer

MONITORS: list[dict[str, Any]] = [
    {"name": "Desk reliance on the AI", "chart": "over_reliance", "scope": "organization", "model_id": demo_data.MODEL,
     "baseline": {"mode": "next", "decisions": 200}, "h": 5.0},
    {"name": "v2.2 right more often than it says", "chart": "ai_calibration_down", "scope": "organization",
     "model_id": demo_data.MODEL, "model_version": "2.2", "h": 5.0},
    {"name": "v2.2 wrong more often than it says", "chart": "ai_calibration_up", "scope": "organization",
     "model_id": demo_data.MODEL, "model_version": "2.2", "h": 5.0},
    {"name": "Vigilance probes, whole desk", "chart": "probe_sprt", "scope": "organization"},
]  # fmt: skip
DISPOSITIONS = {  # the calibration alarm stays open: the demo's reports and console show one to triage
    "probe_sprt": ("reviewer_coached", "Probe misses traced to the over-trusting officers; coached."),
}


def create_monitors(customer: Customer) -> str:
    for body in MONITORS:
        drift_services.monitor_create(customer=customer, body=body_parse(MonitorCreateInput, body))
    return f"Drift monitors: {len(MONITORS)} ({', '.join(str(m['name']) for m in MONITORS)}), before the decisions."


def acknowledge_some(customer: Customer, actor: str) -> str:
    """Acknowledge the first open alarm of the charts in DISPOSITIONS; one line for the report."""
    alarms = drift_reporting.open_alarms(customer)
    done: set[str] = set()
    for alarm in alarms:
        if alarm.chart in DISPOSITIONS and alarm.chart not in done:
            disposition, note = DISPOSITIONS[alarm.chart]
            body = body_parse(AcknowledgeInput, {"disposition": disposition, "note": note})
            drift_services.alarm_acknowledge(alarm=alarm, body=body, default_by=actor)
            done.add(alarm.chart)
    by_chart: dict[str, int] = {}
    for alarm in alarms:
        by_chart[alarm.chart] = by_chart.get(alarm.chart, 0) + 1
    counts = ", ".join(f"{n} {chart}" for chart, n in sorted(by_chart.items())) or "none"
    return f"Drift alarms raised: {counts}; {len(done)} acknowledged with a disposition, the rest open."
