"""The event catalogue, with the regulation each event names (docs/reference/events.md, "Event list")."""

EVENT_REGULATIONS: dict[str, str | None] = {
    "trust.miscalibrated": "EU AI Act Art. 14(4)(b)",
    "bias.detected": "EU AI Act Art. 10",
    "risk_user.identified": "All",
    "threshold.breached": "All",
    "audit.required": "Texas TRAIGA",
    "compliance.report_ready": "All",
    "model.bias.ingested": None,
    "bias.amplification": None,
    "audit.checkpoint": None,
    "erasure.completed": "GDPR Art. 17",
    "oversight.rubber_stamp": "EU AI Act Art. 14(4)(b), 26(2)",
    "oversight.probe_missed": "EU AI Act Art. 14(4)(b)",
    "drift_monitor.configured": None,
    "drift_monitor.baseline_completed": None,
    "drift_monitor.calibrated": None,
    "drift_alarm.raised": "EU AI Act Art. 14(4)(b), 26(5)",
    "drift_alarm.acknowledged": "EU AI Act Art. 26(5)",
    "probe_sprt.concluded": "EU AI Act Art. 14(4)(b)",
}
EVENT_TYPES = list(EVENT_REGULATIONS)
TEST_EVENT_TYPE = "webhook.test"
