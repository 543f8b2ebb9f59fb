"""Drift monitoring as a printed report shows it (templates/compliance/_drift_monitoring.html):
the monitors with their limits and run lengths, the alarms with their dispositions and notes, the
SPRT conclusions per reviewer, counts with thousands separators, an absent figure as "not
measured" with its reason."""

from compliance import printing
from config.jsondoc import JSONObject

ROWS_MAX = 200  # monitors, alarms and SPRT rows printed per table; the json export holds all
CHARTS_MAX = 12  # monitor charts printed; the json export and the console show every monitor
CHART_NAMES = {
    "over_reliance": "over-reliance",
    "under_reliance": "under-reliance",
    "ai_calibration_up": "AI wrong more often",
    "ai_calibration_down": "AI right more often",
    "probe_sprt": "probe SPRT",
}


def _run_length(value: float | None, se: float | None = None) -> str:
    if value is None:
        return "not measured (h given, not calibrated)"
    return f"{value:,.1f}" + (f" ± {se:,.1f}" if se is not None else "")


def who(row: JSONObject) -> str:
    return (
        str(row["user_id"]) if row.get("scope", "user") == "user" and row.get("user_id") else "organisation"
    )


def _monitor(m: JSONObject) -> JSONObject:
    sprt = m.get("sprt")
    if sprt:
        limit = f"p0 {sprt['p0']:g}, p1 {sprt['p1']:g}, alpha {sprt['alpha']:g}, beta {sprt['beta']:g}"
    else:
        limit = (
            f"h {m['h']:g} ({m['h_source']}), R {m['odds_ratio']:g}" if m.get("h") is not None else "no h yet"
        )
    expected = m["expected_false_alarms_per_30_days"]
    model = " ".join(str(v) for v in (m.get("model_id"), m.get("model_version")) if v) or "every model"
    return {
        "name": m["name"],
        "watches": f"{CHART_NAMES.get(m['chart'], m['chart'])} of {who(m)}, {model}",
        "limit": limit,
        "arl0": (
            f"target {m['arl0_target']:,}, achieved {_run_length(m['arl0'], m['arl0_se'])}"
            if m.get("arl0_target")
            else _run_length(m["arl0"])
        ),
        "arl1": f"{_run_length(m['arl1_r2'])} / {_run_length(m['arl1_r3'])}"
        if m.get("arl1_r2") is not None
        else "",
        "baseline": (
            f"{m['baseline_decisions']:,}"
            + (f" ({m['fit_method'].replace('_', ' ')})" if m.get("fit_method") else "")
            if m.get("baseline_decisions")
            else "none"
        ),
        "status": m["status_at_period_end"],
        "points": printing.count(m["points_in_period"]),
        "alarms": printing.count(m["alarms_in_period"]),
        "expected": "" if expected is None else f"{expected:,.2f}",
    }


def _alarm(a: JSONObject) -> JSONObject:
    hours = a["hours_to_acknowledge"]
    if a["acknowledged_at"]:
        triage = (
            f"acknowledged {printing.when(a['acknowledged_at'])} by {a['acknowledged_by']}, after {hours:,.1f} h: "
            f"{(a['disposition'] or '').replace('_', ' ')}" + (f". {a['note']}" if a["note"] else "")
        )
    else:
        triage = "open: not acknowledged by the period's end"
    who_ = str(a["user_id"]) if a.get("user_id") else "organisation"
    return {
        "raised": printing.when(a["raised_at"]),
        "alarm_id": a["alarm_id"],
        "watches": f"{CHART_NAMES.get(a['chart'], a['chart'])} of {who_}",
        "statistic": f"{a['statistic']:.3f} ≥ {a['threshold']:g} at point {printing.count(a['point_index'])}",
        "excess": f"{a['excess']:.2f} ({a['severity']})",
        "signals": printing.count(a["signals"]),
        "triage": triage + ("" if a["in_period"] else " (raised before the period)"),
    }


def _sprt(row: JSONObject) -> JSONObject:
    return {
        "who": str(row["user_id"]) if row.get("user_id") else "organisation",
        "model": row.get("model_id") or "every model",
        "h0": printing.count(row["h0"]),
        "h1": printing.count(row["h1"]),
        "last": (
            f"{row['last_conclusion']} at {printing.when(row['last_concluded_at'])}"
            if row.get("last_conclusion")
            else ""
        ),
    }


def _cut[T](rows: list[T], what: str) -> tuple[list[T], str]:
    if len(rows) <= ROWS_MAX:
        return rows, ""
    return rows[
        :ROWS_MAX
    ], f"The first {ROWS_MAX:,} of {len(rows):,} {what} are printed; the json export holds all."


def drift_monitoring(data: JSONObject) -> JSONObject:
    totals = data["totals"]
    monitors, monitors_note = _cut(data["monitors"], "monitors")
    alarms, alarms_note = _cut(data["alarms"], "alarms")
    sprt, sprt_note = _cut(data["sprt_conclusions"], "SPRT rows")
    return {
        "evidences": data["evidences"],
        "statement": data["statement"],
        "facts": [
            ("Monitors in force in the period", printing.count(totals["monitors"])),
            ("Alarms raised in the period", printing.count(totals["alarms_raised"])),
            ("Alarms open at the period's end", printing.count(totals["alarms_open_at_period_end"])),
            ("Raised, by severity", printing.by_key(totals["by_severity"], ("high", "medium", "low"))),
            ("Dispositions of the period", printing.by_key(totals["by_disposition"])),
        ],
        "monitors": [_monitor(m) for m in monitors],
        "monitors_note": monitors_note,
        "alarms": [_alarm(a) for a in alarms],
        "alarms_note": alarms_note,
        "sprt": [_sprt(r) for r in sprt],
        "sprt_note": sprt_note,
        "withheld": data.get("reviewers_withheld", ""),
        "charts": [],
    }
