"""Amplification end to end: decisions logged over POST /log with subgroups, then a signal
ingested or re-analysed; the figures of docs/reference/fairness.md read back over HTTP."""

import datetime as dt
import itertools

import pandas as pd
import pytest

from audit.models import Decision
from config.timeutils import isoformat
from tests.fairness.helpers import ALERTS, SIGNALS, now_iso, post_signal, signal_body
from webhooks.models import Event

pytestmark = pytest.mark.django_db
MODEL = "credit-v3"
_ids = itertools.count()


def log_cells(api, group: str, cells: dict[tuple[str, str], int], *, model_id: str = MODEL, attribute: str = "gender",
              timestamp: str | None = None, **extra):  # fmt: skip
    """Log `n` decisions of `group` for every (ai_recommendation, user_decision): n."""
    subgroups = {"custom": {attribute[7:]: group}} if attribute.startswith("custom.") else {attribute: group}
    for (ai, human), n in cells.items():
        for _ in range(n):
            body = {"decision_id": f"e2e-{next(_ids)}", "user_id": "u1", "model_id": model_id,
                    "ai_recommendation": ai, "user_decision": human, "subgroups": subgroups, **extra}  # fmt: skip
            if timestamp:
                body["timestamp"] = timestamp
            response = api.post("/v1/log", body, format="json")
            assert response.status_code == 201, response.content


def log_rates(api, group: str, total: int, ai_yes: int, human_yes: int, **kw):
    """`total` decisions: the AI approves `ai_yes`, humans approve `human_yes` (overlapping first)."""
    both = min(ai_yes, human_yes)
    cells = {("approve", "approve"): both, ("approve", "deny"): ai_yes - both, ("deny", "approve"): human_yes - both,
             ("deny", "deny"): total - ai_yes - human_yes + both}  # fmt: skip
    log_cells(api, group, {k: v for k, v in cells.items() if v}, **kw)


def test_worked_example_scores_025_medium_with_an_open_alert(api):
    log_rates(api, "male", 30, 18, 21)  # AI 60 %, humans 70 %
    log_rates(api, "female", 30, 12, 9)  # AI 40 %, humans 30 %
    sig = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    analysis = sig["analysis"]
    assert analysis["status"] == "completed"
    assert analysis["amplificationScore"] == 0.25
    assert analysis["riskLevel"] == "medium"
    assert analysis["direction"] == "amplifying"
    assert (analysis["modelDisparityObserved"], analysis["humanDisparity"]) == (0.2, 0.4)
    assert analysis["decisionsAnalyzed"] == 60
    assert analysis["groups"]["privileged"] == {
        "name": "male", "decisions": 30, "aiRates": {"approve": 0.6, "deny": 0.4},
        "humanRates": {"approve": 0.7, "deny": 0.3},
    }  # fmt: skip
    assert sig["alertId"].startswith("amp_")
    alert = api.get(f"{ALERTS}/{sig['alertId']}").json()
    assert (alert["status"], alert["severity"], alert["riskLevel"]) == ("open", "medium", "medium")
    assert alert["amplificationScore"] == 0.25 and alert["signal"]["id"] == sig["id"]
    assert not Event.objects.filter(type="bias.amplification").exists()
    assert Event.objects.get(type="model.bias.ingested").data["alertId"] == sig["alertId"]


def test_humans_approving_all_of_one_group_and_none_of_the_other_is_critical_and_fires_an_event(api):
    log_rates(api, "male", 30, 18, 30)
    log_rates(api, "female", 30, 12, 0)
    sig = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    assert sig["analysis"]["amplificationScore"] == 1.0
    assert sig["analysis"]["riskLevel"] == "critical"
    event = Event.objects.get(type="bias.amplification")
    assert event.customer_id == "acme"
    assert event.data["signalId"] == sig["id"] and event.data["alertId"] == sig["alertId"]
    assert event.data["amplificationScore"] == 1.0 and event.data["riskLevel"] == "critical"
    assert event.data["modelId"] == MODEL and event.data["protectedAttribute"] == "gender"


def test_humans_narrowing_the_gap_score_zero_mitigating_and_raise_no_alert(api):
    log_rates(api, "male", 30, 18, 16)
    log_rates(api, "female", 30, 12, 14)
    sig = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    assert sig["analysis"]["amplificationScore"] == 0
    assert sig["analysis"]["direction"] == "mitigating"
    assert sig["analysis"]["riskLevel"] == "none"
    assert sig["alertId"] is None
    assert api.get(ALERTS).json()["data"] == []


def test_ten_decisions_per_group_is_insufficient_data_without_alert(api):
    log_rates(api, "male", 10, 6, 10)
    log_rates(api, "female", 10, 4, 0)
    sig = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    assert sig["analysis"]["status"] == "insufficient_data"
    assert sig["analysis"]["amplificationScore"] is None
    assert sig["analysis"]["groups"]["privileged"]["decisions"] == 10
    assert sig["alertId"] is None
    assert api.get(ALERTS).json()["pagination"]["total"] == 0


def test_groups_default_to_the_two_largest_with_the_ai_favourite_privileged(api):
    log_rates(api, "female", 40, 16, 12)
    log_rates(api, "male", 35, 21, 28)
    log_rates(api, "other", 5, 5, 5)
    sig = post_signal(api, modelId=MODEL, privilegedGroup=..., unprivilegedGroup=...).json()
    groups = sig["analysis"]["groups"]
    assert (groups["privileged"]["name"], groups["unprivileged"]["name"]) == ("male", "female")
    assert sig["analysis"]["decisionsAnalyzed"] == 75


def test_only_the_signals_model_customer_attribute_and_window_are_correlated(api, other_api):
    log_rates(api, "male", 30, 18, 21)
    log_rates(api, "female", 30, 12, 9)
    # Noise that must not count: another model, another customer, another attribute, too old.
    log_rates(api, "female", 30, 30, 0, model_id="other-model")
    log_rates(other_api, "female", 30, 30, 0)
    log_rates(api, "female", 30, 30, 0, attribute="age_group")
    log_rates(api, "female", 30, 30, 0, timestamp=now_iso(days=-40))
    sig = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    assert sig["analysis"]["decisionsAnalyzed"] == 60
    assert sig["analysis"]["amplificationScore"] == 0.25


def test_a_custom_protected_attribute_reads_the_custom_subgroup(api):
    log_rates(api, "north", 30, 18, 21, attribute="custom.region")
    log_rates(api, "south", 30, 12, 9, attribute="custom.region")
    for attribute in ("region", "custom.region"):
        sig = post_signal(api, modelId=MODEL, protectedAttribute=attribute, privilegedGroup="north",
                          unprivilegedGroup="south").json()  # fmt: skip
        assert sig["analysis"]["amplificationScore"] == 0.25, attribute


def test_reanalysis_updates_the_open_alert_and_escalation_fires_once(api):
    log_rates(api, "male", 30, 18, 21)
    log_rates(api, "female", 30, 12, 9)
    sig = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    alert_id = sig["alertId"]
    api.patch(f"{ALERTS}/{alert_id}", {"status": "acknowledged"}, format="json")
    # The gap widens: humans now approve 69/90 men and 15/90 women (AI: 60 % and 40 %).
    log_rates(api, "male", 60, 36, 48)
    log_rates(api, "female", 60, 24, 6)
    body = api.post(f"{ALERTS}/analyze/{sig['id']}").json()
    assert body["signalId"] == sig["id"]
    assert body["alert"]["id"] == alert_id
    assert body["alert"]["severity"] == body["analysis"]["riskLevel"] == "high"
    assert body["alert"]["status"] == "acknowledged"
    assert api.get(f"{SIGNALS}/{sig['id']}").json()["analysis"] == body["analysis"]
    assert Event.objects.filter(type="bias.amplification").count() == 1
    api.post(f"{ALERTS}/analyze/{sig['id']}")
    assert Event.objects.filter(type="bias.amplification").count() == 1  # same level: no repeat


def test_reanalysis_leaves_a_resolved_alert_alone(api):
    log_rates(api, "male", 30, 18, 21)
    log_rates(api, "female", 30, 12, 9)
    sig = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    api.patch(f"{ALERTS}/{sig['alertId']}", {"status": "resolved", "resolvedBy": "dana"}, format="json")
    log_rates(api, "male", 60, 36, 48)
    log_rates(api, "female", 60, 24, 6)
    body = api.post(f"{ALERTS}/analyze/{sig['id']}").json()
    assert body["analysis"]["riskLevel"] == "high"
    assert (body["alert"]["status"], body["alert"]["severity"]) == ("resolved", "medium")


def test_the_score_matches_a_pandas_computation_straight_from_the_decisions(api):
    # Three groups, three outcome values, uneven cells: the two largest are compared.
    log_cells(api, "a", {("approve", "approve"): 19, ("approve", "refer"): 4, ("refer", "approve"): 6,
                         ("deny", "deny"): 9, ("refer", "refer"): 3, ("deny", "approve"): 2})  # fmt: skip
    log_cells(api, "b", {("approve", "approve"): 8, ("approve", "deny"): 7, ("refer", "deny"): 5,
                         ("deny", "deny"): 12, ("refer", "refer"): 4, ("deny", "refer"): 2})  # fmt: skip
    log_cells(api, "c", {("approve", "approve"): 20})
    sig = post_signal(api, modelId=MODEL, privilegedGroup=..., unprivilegedGroup=...).json()

    since = dt.datetime.fromisoformat(sig["signalTimestamp"].replace("Z", "+00:00")) - dt.timedelta(days=30)
    rows = Decision.objects.filter(customer_id="acme", model_id=MODEL, timestamp__gte=since).values(
        "ai_recommendation", "user_decision", "subgroups"
    )
    df = pd.DataFrame.from_records(list(rows))
    df["group"] = df["subgroups"].map(lambda s: s.get("gender"))
    df = df.dropna(subset=["group"])
    df["ai"] = df["ai_recommendation"].str.strip().str.casefold()
    df["human"] = df["user_decision"].str.strip().str.casefold()
    sizes = df["group"].value_counts()
    top2 = sorted(sizes.index, key=lambda g: (-sizes[g], g))[:2]
    fav = df["ai"].isin(["approve"]).groupby(df["group"]).mean()
    priv, unpriv = sorted(top2, key=lambda g: -fav[g])
    ai = pd.crosstab(df["group"], df["ai"], normalize="index")
    human = pd.crosstab(df["group"], df["human"], normalize="index")
    values = sorted(set(ai.columns) | set(human.columns))
    ai, human = ai.reindex(columns=values, fill_value=0), human.reindex(columns=values, fill_value=0)
    a = ai.loc[priv] - ai.loc[unpriv]
    h = human.loc[priv] - human.loc[unpriv]
    d_ai, d_h = a.abs().sum() / 2, h.abs().sum() / 2
    amp = (a.apply(lambda x: (x > 0) - (x < 0)) * (h - a)).sum() / 2
    expected = 0.0 if d_ai >= 1 else min(max(amp / (1 - d_ai), 0.0), 1.0)

    analysis = sig["analysis"]
    assert (analysis["groups"]["privileged"]["name"], analysis["groups"]["unprivileged"]["name"]) == (
        priv,
        unpriv,
    )
    assert analysis["amplificationScore"] == pytest.approx(round(expected, 4), abs=1e-9)
    assert analysis["modelDisparityObserved"] == pytest.approx(round(d_ai, 4), abs=1e-9)
    assert analysis["humanDisparity"] == pytest.approx(round(d_h, 4), abs=1e-9)
    assert analysis["amplificationScore"] > 0  # the case exercises a non-trivial figure


def test_signal_timestamp_sets_the_correlation_window(api):
    old = isoformat(dt.datetime.now(dt.UTC) - dt.timedelta(days=50))
    log_rates(api, "male", 30, 18, 21, timestamp=old)
    log_rates(api, "female", 30, 12, 9, timestamp=old)
    recent = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female").json()
    assert recent["analysis"]["status"] == "insufficient_data"
    earlier = post_signal(api, modelId=MODEL, privilegedGroup="male", unprivilegedGroup="female",
                          signalTimestamp=now_iso(days=-45)).json()  # fmt: skip
    assert earlier["analysis"]["amplificationScore"] == 0.25


def test_a_back_filled_signal_is_analysed_with_the_decisions_up_to_its_analysis_time_only(api):
    from config.bodymodels import body_parse
    from fairness.inputs import SignalInput
    from fairness.services import signal_ingest
    from keys.models import Customer

    # Analysed as of noon three days ago (seed_demo's history): the decisions of that morning
    # count, those of the same afternoon and of the days after do not.
    analyzed = (dt.datetime.now(dt.UTC) - dt.timedelta(days=3)).replace(
        hour=12, minute=0, second=0, microsecond=0
    )
    before = isoformat(analyzed - dt.timedelta(hours=2))
    log_rates(api, "male", 30, 18, 21, timestamp=before, model_version="3.1")
    log_rates(api, "female", 30, 12, 9, timestamp=before, model_version="3.1")
    for when in (analyzed + dt.timedelta(minutes=1), analyzed + dt.timedelta(days=1)):
        log_rates(api, "male", 30, 15, 30, timestamp=isoformat(when), model_version="3.1")
        log_rates(api, "female", 30, 15, 0, timestamp=isoformat(when), model_version="3.1")

    body = signal_body(modelId=MODEL, signalTimestamp=isoformat(analyzed - dt.timedelta(hours=1)))
    customer = Customer.objects.get(pk="acme")
    result = signal_ingest(customer=customer, data=body_parse(SignalInput, body), at=analyzed)
    assert result.analysis["analyzedAt"] == isoformat(analyzed)
    assert result.analysis["decisionsAnalyzed"] == 60
    assert result.analysis["amplificationScore"] == 0.25  # the worked example's decisions alone

    # Analysed now, the same signal sees every decision since.
    now = api.post(f"{ALERTS}/analyze/{result.signal.id}").json()["analysis"]
    assert now["decisionsAnalyzed"] == 180
    assert now["amplificationScore"] == round((72 / 90 - 6 / 90) / (1 - 6 / 90), 4)  # 0.7857
