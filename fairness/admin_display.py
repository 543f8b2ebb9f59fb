"""HTML pieces of the amplification alert page and the fairness signal page: the analysis figures
and both groups' AI and human rates side by side (an alert and the signal it came from hold the same
analysis), and the signal's own figures. Everything is escaped through format_html."""

from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from config.admin import badge, count, when
from config.jsondoc import JSONObject
from fairness.models import AmplificationAlert, FairnessSignal

FIGURES = (
    ("amplificationScore", "Amplification score", "How much of the room left by the model the humans used to widen the gap (0 to 1)."),
    ("direction", "Direction", "amplifying: people widen the model's gap; mitigating: they narrow it."),
    ("modelDisparityReported", "Model disparity reported", "The metric value the fairness tool sent."),
    ("modelDisparityObserved", "Model disparity observed", "The AI recommendations' gap between the groups in the logged decisions, in percentage points."),
    ("humanDisparity", "Human disparity", "The final human decisions' gap between the same groups, in percentage points."),
    ("decisionsAnalyzed", "Decisions analysed", "Logged decisions of this model carrying the attribute."),
    ("analyzedAt", "Analysed at", ""),
)  # fmt: skip


# The gaps between the groups' rates, printed in percentage points like the rates beside them.
GAPS = ("modelDisparityObserved", "humanDisparity")


def _pct(value: object) -> str:
    return f"{float(value) * 100:.1f}%" if isinstance(value, int | float) else "-"


def _figure(key: str, value: object) -> str:
    if value is None:
        return "-"
    if key == "analyzedAt" and isinstance(value, str):  # an ISO string in the stored figures
        return when(value)
    if key == "decisionsAnalyzed" and isinstance(value, int):
        return count(value)
    if key in GAPS and isinstance(value, int | float):
        return _points(value)
    if isinstance(value, float):
        return (
            f"{value:.3f}"  # a score or the tool's own metric, to three decimals (the API answers it in full)
        )
    return str(value)


def _points(value: float) -> str:
    """A gap between two rates in percentage points, beside the rates' percentages ("12.3 points")."""
    return f"{value * 100:.1f} points"


def analysis_figures(analysis: JSONObject | None) -> SafeString:
    analysis = analysis or {}
    if not analysis:
        return format_html("<p>{}</p>", "No amplification analysis was made of this signal.")
    rows = format_html_join(
        "",
        "<tr><th>{}</th><td class='tc-num'>{}</td><td class='tc-help'>{}</td></tr>",
        ((label, _figure(key, analysis.get(key)), help_text) for key, label, help_text in FIGURES),
    )  # fmt: skip
    return format_html("<table class='tc-rates'><tbody>{}</tbody></table>", rows)


def group_rates(analysis: JSONObject | None) -> SafeString:
    """One row per outcome value: AI and human rate of the privileged group, then of the
    unprivileged group; a human rate further from the other group's than the AI's is marked."""
    groups = (analysis or {}).get("groups") or {}
    priv, unpriv = groups.get("privileged") or {}, groups.get("unprivileged") or {}
    if not priv or not unpriv:
        return format_html("<p>{}</p>", "Not enough decisions in both groups for rates.")
    values = sorted(
        {*priv.get("aiRates", {}), *priv.get("humanRates", {}), *unpriv.get("aiRates", {}), *unpriv.get("humanRates", {})}
    )  # fmt: skip
    rows = []
    for value in values:
        pa, ph = priv.get("aiRates", {}).get(value, 0), priv.get("humanRates", {}).get(value, 0)
        ua, uh = unpriv.get("aiRates", {}).get(value, 0), unpriv.get("humanRates", {}).get(value, 0)
        wider = abs(ph - uh) > abs(pa - ua)
        rows.append(
            (
                value,
                _pct(pa),
                _pct(ph),
                _pct(ua),
                _pct(uh),
                _points(pa - ua),
                "tc-up" if wider else "",
                _points(ph - uh),
            )
        )
    body = format_html_join(
        "",
        "<tr><th>{}</th><td class='tc-num'>{}</td><td class='tc-num'>{}</td><td class='tc-num'>{}</td>"
        "<td class='tc-num'>{}</td><td class='tc-num'>{}</td><td class='tc-num {}'>{}</td></tr>",
        rows,
    )
    return format_html(
        "<table class='tc-rates'><thead><tr><th rowspan='2'>Decision</th>"
        "<th colspan='2'>Privileged: {} ({} decisions)</th><th colspan='2'>Unprivileged: {} ({} decisions)</th>"
        "<th colspan='2'>Gap between the groups (points)</th></tr>"
        "<tr><th>AI</th><th>Human</th><th>AI</th><th>Human</th><th>AI</th><th>Human</th></tr></thead>"
        "<tbody>{}</tbody></table><p class='tc-help'>Red: the humans' gap is wider than the AI's.</p>",
        priv.get("name") or "-", count(priv.get("decisions", 0)), unpriv.get("name") or "-",
        count(unpriv.get("decisions", 0)), body,
    )  # fmt: skip


def signal_summary(alert: AmplificationAlert) -> SafeString:
    signal = alert.signal
    url = reverse("admin:fairness_fairnesssignal_change", args=[signal.pk])
    return format_html(
        "<a href='{}'>{}</a>: {} {} = {} on {} ({} vs {}), reported {}",
        url, signal.pk, signal.external_tool_id, signal.metric_name, signal.metric_value,
        signal.protected_attribute, signal.privileged_group or "auto", signal.unprivileged_group or "auto",
        signal.signal_timestamp.strftime("%Y-%m-%d %H:%M UTC"),
    )  # fmt: skip


def status_history(alert: AmplificationAlert) -> SafeString:
    """Every status change, oldest first; an alert never triaged says so instead of bare headers."""
    changes = list(alert.status_changes.order_by("at", "id"))
    if not changes:
        return format_html(
            "<p id='status-history-empty'>No status change yet: open since it was raised on {}.</p>",
            when(alert.created_at),
        )
    rows = format_html_join(
        "",
        "<tr><td class='tc-nowrap'>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        ((when(c.at), badge(c.from_status), badge(c.to_status), c.by or "-", c.notes or "") for c in changes),
    )
    return format_html(
        "<table class='tc-rates' id='status-history'><thead><tr><th>At</th><th>From</th><th>To</th><th>By</th>"
        "<th>Notes</th></tr></thead><tbody>{}</tbody></table>",
        rows,
    )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.1f}"


def signal_metric(signal: FairnessSignal) -> SafeString:
    """What the tool reported, in words: the metric and its value, the threshold and whether it
    passed, the sample and the interval."""
    passed = {True: "passes", False: "fails", None: "no pass or fail reported"}[signal.passes_threshold]
    threshold = f" (threshold {_number(signal.threshold)}: {passed})" if signal.threshold is not None else ""
    interval = signal.confidence_interval
    ci = (
        f"{_number(interval[0])} to {_number(interval[1])}"
        if isinstance(interval, list) and len(interval) == 2
        else "not reported"
    )
    return format_html(
        "{} = {}{}<br>Sample: {} · Confidence interval: {}",
        signal.metric_name, _number(signal.metric_value), threshold,
        count(signal.sample_size) if signal.sample_size is not None else "not reported", ci,
    )  # fmt: skip


def signal_groups(signal: FairnessSignal) -> str:
    privileged = signal.privileged_group or "chosen by the analysis"
    unprivileged = signal.unprivileged_group or "chosen by the analysis"
    return f"{signal.protected_attribute}: privileged {privileged}, unprivileged {unprivileged}"
