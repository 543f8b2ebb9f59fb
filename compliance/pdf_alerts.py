"""The alert cards of the PDF (docs/reference/reports.md, "Alerts in the PDF"): each alert says what
it measured (the metric, the groups compared with their rates and sizes, the p and q values, the
window of decisions), and every count sentence is followed by exactly the alerts it counts."""

from collections.abc import Iterable

from compliance import printing
from config.jsondoc import JSONObject

ALERT_STATUS_ORDER = ("open", "acknowledged", "resolved", "false_positive")
SEVERITY_ORDER = ("critical", "high", "medium", "low")
TESTS = {"fisher_exact": "Fisher's exact", "z_test": "z-test"}
NO_TEST = (
    "none: the amplification score describes the logged decisions; no significance test is made, "
    "so there is no p or q value"
)


def history_rows(history: list[JSONObject]) -> list[list[str]]:
    return [
        [
            printing.when(change.get("at")),
            printing.figure("by", change.get("by")),
            (change.get("from") or "(new)").replace("_", " "),
            str(change.get("to") or "").replace("_", " "),
            printing.figure("notes", change.get("notes")),
        ]
        for change in history
    ]


def window(item: JSONObject) -> str:
    bounds = item.get("window") or {}
    if not bounds.get("from") or not bounds.get("to"):
        return "not recorded"
    return f"decisions made from {printing.when(bounds['from'])} to {printing.when(bounds['to'])}"


def _group(data: JSONObject, role: str) -> str:
    return f"{data.get('name') or 'unknown'} ({role}, {printing.count(data.get('decisions'))} decisions)"


def _metric(item: JSONObject) -> str:
    metric, reported = item.get("metric_name"), item.get("metric_value")
    if not metric or not isinstance(reported, int | float):
        return "not recorded"
    return f"{metric} = {printing.score(reported)}, reported by {item.get('external_tool') or 'the fairness tool'}"


def _rates_table(privileged: JSONObject, unprivileged: JSONObject) -> JSONObject | None:
    """Both groups' AI and human rates per decision value, side by side."""
    rates = [(g.get("aiRates") or {}, g.get("humanRates") or {}) for g in (privileged, unprivileged)]
    values = sorted({v for pair in rates for part in pair for v in part})
    if not values:
        return None
    first, second = privileged.get("name") or "privileged", unprivileged.get("name") or "unprivileged"
    return {
        "columns": ["Decision", f"AI, {first}", f"Human, {first}", f"AI, {second}", f"Human, {second}"],
        "rows": [[v, *(printing.pct(part.get(v, 0.0)) for pair in rates for part in pair)] for v in values],
    }


def _amplification(item: JSONObject) -> tuple[list[tuple[str, str]], JSONObject | None]:
    groups = item.get("groups") or {}
    privileged, unprivileged = groups.get("privileged") or {}, groups.get("unprivileged") or {}
    direction = f" ({item['direction']})" if item.get("direction") else ""
    facts = [
        ("Model", item.get("model_id") or "all models"),
        ("Protected attribute", printing.figure("protected_attribute", item.get("protected_attribute"))),
        ("Metric", _metric(item)),
        ("Groups compared", f"{_group(privileged, 'privileged')} and {_group(unprivileged, 'unprivileged')}"),
        (
            "Gap between the groups",
            f"AI recommendations {printing.figure('model_disparity_observed', item.get('model_disparity_observed'))}, "
            f"final human decisions {printing.figure('human_disparity', item.get('human_disparity'))}",
        ),
        (
            "Amplification score",
            printing.score(item.get("amplification_score"), "amplification_score") + direction,
        ),
        ("p and q values", NO_TEST),
        ("Window", window(item)),
        ("Status now", str(item.get("status", "")).replace("_", " ")),
    ]
    return facts, _rates_table(privileged, unprivileged)


def _finding_row(finding: JSONObject) -> list[str]:
    sizes = finding.get("sample_sizes") or {}
    value = finding.get("value")
    if finding.get("bias_type") == "disparate_impact":
        size = f"ratio {printing.score(value)}"
    else:
        size = f"gap {abs(value or 0.0) * 100:.1f} pp"
    if finding.get("p_value") is None:
        test = "not tested (a group under 5 decisions)"
    else:
        q = finding.get("q_value")
        test = (
            f"{TESTS.get(finding.get('test') or '', 'z-test')}: p {printing.figure('p_value', finding['p_value'])}, "
            + (
                f"q {printing.figure('q_value', q)}"
                if q is not None
                else "q not computed (raised before adjustment)"
            )
        )
    return [
        str(finding.get("bias_type", "")).replace("_", " "),
        str(finding.get("attribute", "")),
        f"{finding.get('group')} ({printing.count(sizes.get('group'))}) vs "
        f"{finding.get('reference_group')} ({printing.count(sizes.get('reference_group'))})",
        f"{printing.pct(finding.get('group_rate'))} vs {printing.pct(finding.get('reference_rate'))}",
        size,
        test,
        str(finding.get("severity", "")),
    ]


def _bias(item: JSONObject) -> tuple[list[tuple[str, str]], JSONObject | None]:
    facts = [
        ("Model", item.get("model_id") or "all models"),
        ("Raised by", f"bias detection for decision {item.get('decision_id')}"),
        ("Window", window(item)),
        ("Status", "raised (bias alerts have no triage state)"),
    ]
    findings = item.get("findings") or []
    if not findings:
        facts.insert(
            2,
            ("Bias types", printing.enumeration([t.replace("_", " ") for t in item.get("bias_types") or []])),
        )
        return facts, None
    table = {
        "columns": [
            "Measure",
            "Attribute",
            "Group vs reference (decisions)",
            "Rates",
            "Value",
            "Test",
            "Severity",
        ],
        "rows": [_finding_row(f) for f in findings],
        "widths": [17, 10, 20, 14, 12, 17, 10],
    }
    return facts, table


def alert_entry(item: JSONObject) -> JSONObject:
    amplification = "amplification_score" in item
    facts, table = _amplification(item) if amplification else _bias(item)
    kind = "Amplification alert" if amplification else "Bias alert"
    return {
        "title": f"{kind} {item['alert_id']}",
        "severity": item.get("severity", ""),
        "created": printing.when(item.get("created_at")),
        "facts": facts,
        "table": table,
        "history": history_rows(item.get("status_history") or []),
    }


def alerts_block(title: str, items: list[JSONObject], intro: str) -> JSONObject:
    return {"kind": "alerts", "title": title, "intro": intro, "alerts": [alert_entry(i) for i in items]}


def _listed(counted: int, items: list[JSONObject]) -> str:
    """What follows a count sentence: all of them, or the first ones when the list is capped."""
    if not items:
        return ""
    if len(items) < counted:
        return f" The {printing.count(len(items))} most recent are listed below."
    return " Each is listed below." if counted > 1 else " It is listed below."


def _still_open(earlier: list[JSONObject]) -> JSONObject:
    return alerts_block(
        "Raised before the period and still open",
        earlier,
        f"{printing.count(len(earlier))} high or critical amplification alert(s) raised before the period "
        "and not changed in it are still open or acknowledged:",
    )


def amplification_blocks(value: JSONObject, *, list_alerts: bool) -> Iterable[JSONObject]:
    items = value.get("items") or [] if list_alerts else []
    in_period = [i for i in items if i.get("in_period", True)]
    earlier = [i for i in items if not i.get("in_period", True)]
    counted = value.get("in_period", len(in_period))
    unresolved = value.get("unresolved_high_or_critical") or []
    intro = (
        f"{printing.count(counted)} amplification alert(s) were created or changed in the period."
        + _listed(counted, in_period)
        + f" Up to the period's end {printing.count(value.get('total', 0))} were raised: "
        f"{printing.by_key(value.get('by_status', {}), ALERT_STATUS_ORDER)} (by severity: "
        f"{printing.by_key(value.get('by_severity', {}), SEVERITY_ORDER)}). "
        + (
            f"{printing.count(len(unresolved))} high or critical alert(s) are still open or acknowledged: "
            + printing.enumeration([a["alert_id"] for a in unresolved])
            + "."
            if unresolved
            else "No high or critical alert is open."
        )
    )
    if not list_alerts:
        intro += " Each alert is listed with its status history under Incidents and cure actions."
    yield alerts_block("Amplification alerts and their status history", in_period, intro)
    if earlier:
        yield _still_open(earlier)


def bias_blocks(value: JSONObject, *, list_alerts: bool) -> Iterable[JSONObject]:
    items = value.get("items") or [] if list_alerts else []
    total = value.get("total", 0)
    intro = (
        f"{printing.count(total)} bias alert(s) were raised in the period (by severity: "
        f"{printing.by_key(value.get('by_severity', {}), SEVERITY_ORDER)})." + _listed(total, items)
    )
    if total and not list_alerts:
        intro += " Each alert is listed under Incidents and cure actions."
    yield alerts_block("Bias alerts", items, intro)


def incident_blocks(key: str, items: list[JSONObject]) -> Iterable[JSONObject]:
    """The alerts of a list (an incidents section), each with its status history; amplification
    alerts created or changed in the period apart from the serious ones still open from before."""
    title = "Amplification alerts" if key == "amplification_alerts" else "Bias alerts"
    current = [i for i in items if i.get("in_period", True)]
    earlier = [i for i in items if not i.get("in_period", True)]
    intro = (
        f"{printing.count(len(current))} {title.lower()} "
        + ("created or changed in the period, " if key == "amplification_alerts" else "")
        + "with their status history."
        if current
        else f"No {title.lower()}."
    )
    yield alerts_block(f"{title}: incidents and the actions taken", current, intro)
    if earlier:
        yield _still_open(earlier)
