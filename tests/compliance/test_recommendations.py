"""Recommendations cover every finding (docs/reference/reports.md, The EU AI Act Article 14 report (`eu_ai_act`), item 5): flagged
rubber-stampers, missed probes, open high and critical alerts and each reason for
INSUFFICIENT_EVIDENCE get one, and the Texas report borrows the EU over-trust threshold only as a
figure, never as its own limit. Built cases: the evidence as compliance/evidence.py gathers it."""

import datetime as dt
from typing import Any

from compliance.recommendations import derive

START, END = dt.datetime(2026, 10, 1, tzinfo=dt.UTC), dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


def _evidence(**changes: Any) -> dict[str, Any]:
    org = {
        "counts": {"overtrust": 40, "with_confidence": 200, "with_outcome": 200},
        "coverage": 1.0,
        "scored_decisions": 200,
        "overtrust_rate": 0.72,
        "overtrust_rate_ci": [0.61, 0.81],
        "overtrust_effective_n": 40.0,
        "rair": None,
        "rsr": None,
    }
    evidence = {
        "chain": {"valid": True},
        "organisation": org,
        "amplification": {"unresolved_high_or_critical": []},
        "bias_alerts": {"items": []},
        "users": [],
        "subgroups": {"attributes": {}},
        "review_effort": {"team": {"flagged_reviewers": 0}, "reviewers": []},
        "vigilance": {"totals": {"known_wrong": 0, "caught": 0}, "reviewers": []},
        "drift": {
            "rows": {"monitors": [], "alarms": [], "sprt_conclusions": []},
            "start": START,
            "end": END,
            "per_person": True,
        },
    }
    for key, value in changes.items():
        if key in org:
            org[key] = value
        else:
            evidence[key] = value
    return evidence


def _summary(status: str = "NEEDS_REVIEW") -> dict[str, Any]:
    return {"total_decisions": 200, "compliance_status": status, "compliance_status_reason": "."}


def _by_figure(recs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["figure"]: r for r in recs}


def test_flagged_rubber_stampers_and_missed_probes_each_get_a_recommendation():
    effort = {
        "team": {"flagged_reviewers": 2},
        "reviewers": [{"user_id": "ana", "flagged": True}, {"user_id": "ben", "flagged": True}, {"user_id": "cy", "flagged": False}],
    }  # fmt: skip
    vigilance = {
        "totals": {"known_wrong": 10, "caught": 7},
        "reviewers": [{"user_id": "ana", "known_wrong": 5, "caught": 2}, {"user_id": "cy", "known_wrong": 5, "caught": 5}],
    }  # fmt: skip
    recs = _by_figure(
        derive(_evidence(review_effort=effort, vigilance=vigilance), _summary(), template="eu_ai_act")
    )
    stampers = recs["review_effort.flagged_reviewers"]
    assert stampers["value"] == 2 and "ana, ben" in stampers["text"] and "cy" not in stampers["text"]
    missed = recs["vigilance.missed_probes"]
    assert missed["value"] == 3 and "3 of 10" in missed["text"] and "(by ana)" in missed["text"]


def test_withheld_reviewer_rows_still_recommend_for_the_flagged_count():
    effort = {"team": {"flagged_reviewers": 3}, "reviewers_withheld": "Withheld"}
    recs = _by_figure(derive(_evidence(review_effort=effort), _summary(), template="eu_ai_act"))
    assert "withheld" in recs["review_effort.flagged_reviewers"]["text"]


def test_high_and_critical_bias_alerts_and_open_amplification_alerts_each_get_a_recommendation():
    bias = {"items": [{"alert_id": "ba_1", "severity": "critical"}, {"alert_id": "ba_2", "severity": "high"},
                      {"alert_id": "ba_3", "severity": "low"}]}  # fmt: skip
    amplification = {"unresolved_high_or_critical": [{"alert_id": "amp_1", "severity": "high"}]}
    recs = derive(_evidence(bias_alerts=bias, amplification=amplification), _summary(), template="eu_ai_act")
    texts = " ".join(r["text"] for r in recs)
    assert "ba_1" in texts and "ba_2" in texts and "ba_3" not in texts and "amp_1" in texts
    assert [r["priority"] for r in recs if "ba_1" in r["text"]] == ["critical"]


def test_each_reason_for_insufficient_evidence_gets_its_own_recommendation():
    evidence = _evidence(
        scored_decisions=40,
        coverage=0.2,
        overtrust_effective_n=3.5,
        overtrust_rate=0.1,
        overtrust_rate_ci=[0.01, 0.6],
    )
    recs = _by_figure(derive(evidence, _summary("INSUFFICIENT_EVIDENCE"), template="eu_ai_act"))
    for figure in ("scored_decisions", "coverage", "overtrust_effective_n", "overtrust_rate_ci"):
        assert figure in recs, figure
    assert "effective 3.5 decisions" in recs["overtrust_effective_n"]["text"]


def test_the_texas_report_borrows_the_over_trust_threshold_and_does_not_make_it_critical():
    evidence = _evidence(**{"counts": {"overtrust": 40, "with_confidence": 100, "with_outcome": 200}})
    eu = _by_figure(derive(evidence, _summary("NON_COMPLIANT"), template="eu_ai_act"))
    texas = _by_figure(derive(evidence, _summary("NON_COMPLIANT"), template="texas_traiga"))
    assert eu["overtrust_rate"]["priority"] == "critical"
    assert texas["overtrust_rate"]["priority"] == "high"
    assert (
        "under the EU AI Act" in texas["overtrust_rate"]["text"]
        and "Texas Act sets no numeric threshold" in (texas["overtrust_rate"]["text"])
    )
    confidence = "interpretation_aids.confidence_shown_rate"
    assert "Art. 14(4)(c)" in eu[confidence]["text"] and "Art." not in texas[confidence]["text"]
