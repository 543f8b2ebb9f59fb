"""Probes describe no real decision (docs/reference/oversight.md, "What a probe is left out of"):
every real-decision figure is the same with and without them, and no probe fires
trust.miscalibrated."""

import json

import pytest

from tests.compliance.helpers import export_file
from tests.fairness.helpers import post_signal
from tests.oversight.helpers import ago, decision, log_all, probe
from webhooks.models import Event

pytestmark = pytest.mark.django_db

SUBGROUPS = [{"gender": "f", "age_group": "18-30"}, {"gender": "m", "age_group": "31-50"}]


def _real() -> list[dict]:
    items = []
    for i in range(60):
        followed = i % 3 != 0
        extra = {"ai_confidence": (i % 10) / 10, "subgroups": SUBGROUPS[i % 2], "model_id": "credit-v3"}
        if i % 4 == 0:
            extra["outcome"] = "deny" if i % 8 == 0 else "approve"
        items.append(decision(f"u{i % 3}", seconds=float(5 + i), followed=followed, **extra))
    return items


def _probes() -> list[dict]:
    items = []
    for i in range(40):
        kind = "known_wrong" if i % 2 else "known_right"
        extra = {
            "ai_confidence": 0.95,
            "subgroups": SUBGROUPS[i % 2],
            "model_id": "credit-v3",
            "review_seconds": 1.0,
        }
        items.append(probe(f"u{i % 4}", kind, followed=i % 5 != 0, **extra))
    return items


def _figures(api) -> dict:
    """Every figure that describes real decisions, over HTTP."""
    out = {}
    out["org"] = api.post("/v1/trust-score", {}, format="json").json()
    out["user"] = api.post("/v1/trust-score", {"user_id": "u1"}, format="json").json()
    out["exact"] = api.post("/v1/trust-score", {"from": ago(days=2)}, format="json").json()
    out["trend"] = api.get("/v1/trust-score/trend").json()
    out["exact_trend"] = api.get("/v1/trust-score/trend", {"from": ago(days=3)}).json()
    out["subgroups"] = api.get("/v1/bias/subgroups", {"model_id": "credit-v3"}).json()
    out["review_effort"] = api.get("/v1/oversight/review-effort").json()
    for figures in out.values():
        for volatile in ("computed_at", "from", "to"):
            figures.pop(volatile, None)
    return out


def _analysis(api) -> dict:
    signal = post_signal(api).json()
    body = api.post(f"/v1/bias/amplification/analyze/{signal['id']}").json()
    analysis = body["analysis"]
    analysis.pop("analyzedAt", None)
    return analysis


def _report(api) -> dict:
    _, content = export_file(api, template="eu_ai_act", format="json")
    sections = json.loads(content)["sections"]
    summary = sections["executive_summary"]
    tca = sections["trust_calibration_analysis"]
    return {
        "total_decisions": summary["total_decisions"],
        "automation_bias_incidents": summary["automation_bias_incidents"],
        "human_override_rate": summary["human_override_rate"],
        "trust_score": summary["trust_score"],
        "organisation": tca["organisation"],
        "users": tca["users"],
        "review_effort": tca["review_effort"],
        "decision_log": sections["audit_trail"]["decision_log"],
        "subgroups": sections["bias_detection_summary"]["subgroups"],
    }


def test_every_real_figure_is_the_same_with_and_without_probes(api):
    log_all(api, _real())
    figures, analysis, report = _figures(api), _analysis(api), _report(api)
    miscalibrated = Event.objects.filter(type="trust.miscalibrated").count()
    log_all(api, _probes())
    # the probes were stored (and count in vigilance) ...
    assert api.get("/v1/audit-trail", {"probe": "true"}).json()["pagination"]["total"] == 40
    assert api.get("/v1/oversight/vigilance").json()["totals"]["probes"] == 40
    # ... and moved nothing that describes real decisions
    assert _figures(api) == figures
    assert _analysis(api) == analysis
    assert _report(api) == report
    assert Event.objects.filter(type="trust.miscalibrated").count() == miscalibrated


def test_detect_bias_on_a_probe_counts_it_nowhere(api):
    log_all(api, _real())
    before = api.get("/v1/bias/subgroups", {"model_id": "credit-v3"}).json()
    log_all(api, [probe("u1", "known_wrong", followed=True, decision_id="pr1", model_id="credit-v3")])
    r = api.post("/v1/detect-bias", {"decision_id": "pr1", "subgroups": {"gender": "f"}}, format="json")
    assert r.status_code in (200, 201), r.content
    r = api.post("/v1/detect-bias", {"decision_id": "pr1", "subgroups": {"gender": "m"}}, format="json")
    assert r.status_code in (200, 201), r.content
    assert api.get("/v1/bias/subgroups", {"model_id": "credit-v3"}).json() == before


def test_a_probe_never_fires_trust_miscalibrated_through_log_or_calibrate(api):
    api.post("/v1/log", probe("ann", "known_wrong", followed=True, ai_confidence=0.1), format="json")
    r = api.post(
        "/v1/calibrate", probe("ann", "known_right", followed=False, ai_confidence=0.99), format="json"
    )
    assert r.status_code == 200, r.content
    assert r.json()["calibration_category"] == "UNDERTRUSTING"
    assert not Event.objects.filter(type="trust.miscalibrated").exists()
    api.post("/v1/log", decision("ann", followed=True, outcome="deny"), format="json")
    assert Event.objects.filter(type="trust.miscalibrated").count() == 1
