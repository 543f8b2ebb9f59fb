"""The PDF says what each alert measured (docs/reference/reports.md, Alerts in the PDF): the metric,
the groups compared with their rates and sizes, the p and q values and the window, read from the
rendered PDF's text; and each count sentence is followed by exactly the alerts it counts."""

import datetime as dt
import io
import json
import re

import pytest
from pypdf import PdfReader

from compliance import printing
from fairness.models import AmplificationAlert
from tests.compliance.helpers import at, export_file
from tests.fairness.helpers import post_signal

pytestmark = pytest.mark.django_db
MODEL = "credit-v3"
CARD = re.compile(r"(Amplification|Bias) alert (amp|bal)_\w+ (LOW|MEDIUM|HIGH|CRITICAL)")


def _text(content: bytes) -> str:
    pages = PdfReader(io.BytesIO(content)).pages
    return " ".join(" ".join((page.extract_text() or "").split()) for page in pages)


def _log(
    api, group: str, total: int, ai_yes: int, human_yes: int, *, when: str, attribute: str = "gender"
) -> None:
    """`total` decisions of `group`: the AI approves `ai_yes`, the reviewers `human_yes`."""
    both = min(ai_yes, human_yes)
    cells = {("approve", "approve"): both, ("approve", "deny"): ai_yes - both,
             ("deny", "approve"): human_yes - both, ("deny", "deny"): total - ai_yes - human_yes + both}  # fmt: skip
    items = [
        {"decision_id": f"{attribute}-{group}-{when}-{i}", "user_id": "u1", "model_id": MODEL,
         "ai_recommendation": ai, "user_decision": human, "subgroups": {attribute: group}, "timestamp": when}
        for (ai, human), n in cells.items() for i in range(n)
    ]  # fmt: skip
    items = [dict(item, decision_id=f"{item['decision_id']}-{k}") for k, item in enumerate(items)]
    response = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert response.status_code == 200 and response.json()["rejected"] == 0, response.content


@pytest.fixture
def alerts(api):
    """One amplification alert raised in the period, one raised 40 days ago and still open (high),
    and one bias alert of the period."""
    _log(api, "female", 40, 20, 2, when=at(45), attribute="age_group")  # the older alert's decisions
    _log(api, "male", 40, 24, 38, when=at(45), attribute="age_group")
    old = post_signal(api, modelId=MODEL, protectedAttribute="age_group", privilegedGroup="male",
                      unprivilegedGroup="female", signalTimestamp=at(40)).json()  # fmt: skip
    AmplificationAlert.objects.filter(pk=old["alertId"]).update(
        created_at=dt.datetime.fromisoformat(at(40).replace("Z", "+00:00"))
    )
    _log(api, "male", 30, 18, 21, when=at(2))  # AI 60 %, reviewers 70 %
    _log(api, "female", 30, 12, 9, when=at(2))  # AI 40 %, reviewers 30 %
    new = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    detect = api.post(
        "/v1/detect-bias",
        {"decision_id": f"gender-male-{at(2)}-0-0", "subgroups": {"gender": "male"}},
        format="json",
    )
    assert detect.status_code == 200 and detect.json()["alert_id"], detect.content
    old_alert = api.get(f"/v1/bias/amplification/{old['alertId']}").json()
    assert old_alert["severity"] in ("high", "critical") and old_alert["status"] == "open"
    return {"old": old, "new": new, "bias": detect.json()}


def _cards(text: str, start: str, end: str) -> list[str]:
    """The alert cards printed between two pieces of text."""
    begin = text.index(start)
    return [m.group(0) for m in CARD.finditer(text, begin, text.index(end, begin + len(start)))]


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_each_alert_card_prints_its_metric_groups_rates_sizes_tests_and_window(api, alerts, template):
    _, content = export_file(api, template=template, format="pdf")
    text = _text(content)
    new, old, bias = alerts["new"], alerts["old"], alerts["bias"]
    analysis = new["analysis"]
    assert (analysis["amplificationScore"], analysis["direction"]) == (0.25, "amplifying")
    # The amplification alert of the period: the signal's metric, both groups, their rates.
    assert "Metric demographic_parity = 0.20, reported by fairlearn" in text
    assert "Groups compared male (privileged, 30 decisions) and female (unprivileged, 30 decisions)" in text
    assert "Gap between the groups AI recommendations +20.0 pp, final human decisions +40.0 pp" in text
    assert "Amplification score 0.25 (amplifying)" in text
    assert "approve 60.0% 70.0% 40.0% 30.0%" in text and "deny 40.0% 30.0% 60.0% 70.0%" in text
    assert "p and q values none: the amplification score describes the logged decisions" in text
    since = (
        dt.datetime.fromisoformat(new["signalTimestamp"].replace("Z", "+00:00")) - dt.timedelta(days=30)
    ).date()
    assert (
        f"Window decisions made from {since} 00:00:00 UTC to {printing.when(analysis['analyzedAt'])}" in text
    )
    # The bias alert: every finding with its groups, sizes, rates, test, p and q.
    findings = bias["findings"]
    assert findings
    for f in findings:
        sizes = f["sample_sizes"]
        for piece in (f"{f['group']} ({sizes['group']})", f"{f['reference_group']} ({sizes['reference_group']})",
                      f"{f['group_rate'] * 100:.1f}% vs {f['reference_rate'] * 100:.1f}%",
                      f"p {printing.figure('p_value', f['p_value'])}", f"q {printing.figure('q_value', f['q_value'])}"):  # fmt: skip
            assert piece in text, (piece, f)
    outcome = next(f for f in findings if f["bias_type"] == "outcome_disparity")
    assert (outcome["group"], outcome["reference_group"], outcome["value"]) == ("female", "male", 0.4)
    assert "gap 40.0 pp" in text and "ratio 0.43" in text  # 30 % over 70 %: the four-fifths ratio
    assert text.count("Window decisions made from") == 3  # every card names its window
    old_since = dt.date.fromisoformat(at(40)[:10]) - dt.timedelta(days=30)
    assert f"Window decisions made from {old_since} 00:00:00 UTC" in text  # the older alert's own window
    assert "Groups compared male (privileged, 40 decisions) and female (unprivileged, 40 decisions)" in text
    assert old["analysis"]["groups"]["privileged"]["aiRates"]["approve"] == 0.6


def test_a_count_sentence_is_followed_by_exactly_the_alerts_it_counts(api, alerts):
    _, content = export_file(api, template="eu_ai_act", format="pdf")
    text = _text(content)
    counted = "1 amplification alert(s) were created or changed in the period. It is listed below."
    assert counted in text
    assert _cards(text, counted, "Raised before the period and still open") == [
        f"Amplification alert {alerts['new']['alertId']} MEDIUM"
    ]
    still_open = "1 high or critical amplification alert(s) raised before the period and not changed in it"
    assert still_open in text
    (card,) = _cards(text, still_open, "4. Audit trail")
    assert card.startswith(f"Amplification alert {alerts['old']['alertId']}")
    bias = "1 bias alert(s) were raised in the period (by severity:"
    assert len(_cards(text, bias, "Amplification alerts and their status history")) == 1

    _, data = export_file(api, template="eu_ai_act", format="json")
    amplification = json.loads(data)["sections"]["bias_detection_summary"]["amplification_alerts"]
    flags = [(item["alert_id"], item["in_period"]) for item in amplification["items"]]
    assert flags == [(alerts["new"]["alertId"], True), (alerts["old"]["alertId"], False)]
    assert amplification["in_period"] == 1
