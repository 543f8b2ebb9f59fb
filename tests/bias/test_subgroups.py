"""GET /bias/subgroups figures against hand computation, pandas and Fairlearn; the
amplification_counts seam; late outcomes moving the statistics."""

import datetime as dt
import random

import pandas as pd
import pytest
from django.utils import timezone
from fairlearn.metrics import demographic_parity_difference, demographic_parity_ratio
from statsmodels.stats.proportion import proportion_confint

from bias.domain import DEFAULT_FAVORABLE_VALUES
from bias.selectors import GroupValueCount, amplification_counts
from tests.bias.factories import Spec, norm, seed

pytestmark = pytest.mark.django_db


def groups_of(report, attribute):
    return {g["group"]: g for g in report["attributes"][attribute]["groups"]}


def test_subgroup_figures_equal_hand_computed_values(api):
    specs = [
        # group f: 4 decisions
        Spec(ai="approve", human="approve", confidence=0.9, outcome="approve", subgroups={"gender": "f"}),
        Spec(
            ai="approve", human="deny", confidence=0.85, outcome="approve", subgroups={"gender": "f"}
        ),  # undertrust
        Spec(
            ai="deny", human="deny", confidence=0.3, subgroups={"gender": "f"}
        ),  # overtrust (followed, c < 0.5)
        Spec(ai="deny", human="Approve ", subgroups={"gender": "f"}),
        # group m: 2 decisions
        Spec(
            ai="approve", human="approve", confidence=0.4, outcome="deny", subgroups={"gender": "m"}
        ),  # overtrust (followed, c < 0.5)
        Spec(ai="deny", human="deny", subgroups={"gender": "m"}),
    ]
    seed("acme", specs)
    report = api.get("/v1/bias/subgroups").json()
    assert report["model_id"] is None
    gender = report["attributes"]["gender"]
    assert gender["reference_group"] == "f"
    assert gender["impact_reference_group"] == "f"  # no group of 30: the highest of all, ties to the larger
    f, m = groups_of(report, "gender")["f"], groups_of(report, "gender")["m"]
    assert f == {
        "group": "f",
        "decisions": 4,
        "favorable_rate": 0.5,
        "ai_favorable_rate": 0.5,
        "agreement_rate": 0.5,
        "override_rate": 0.5,
        # stake weights (docs/reference/bias.md, Over- and under-trust of a group): w_o 0, 0, 0.4;
        # w_u 0.8, 0.7, 0; the fourth decision is unscored
        "scored_decisions": 3,
        "unscored_decisions": 1,
        "coverage": 0.75,
        "automation_bias_incidents": 1,
        "overtrust_rate": 1.0,
        "overtrust_effective_n": pytest.approx(1.0),
        "overtrust_rate_ci": pytest.approx(list(proportion_confint(1, 1, method="wilson"))),
        "undertrust_rate": pytest.approx(0.7 / 1.5),
        "undertrust_effective_n": pytest.approx(1.5**2 / (0.8**2 + 0.7**2)),
        "undertrust_rate_ci": pytest.approx(
            list(proportion_confint(0.7 / 1.5 * 2.25 / 1.13, 2.25 / 1.13, method="wilson"))
        ),
        "mean_ai_confidence": round((0.9 + 0.85 + 0.3) / 3, 6),
        "decisions_with_outcome": 2,
        "accuracy": 0.5,
        "ai_accuracy": 1.0,
        "impact_ratio": 1.0,
        "disparity": {
            "favorable_rate_difference": 0.0,
            "disparate_impact_ratio": 1.0,
            "override_rate_difference": 0.0,
        },
    }
    assert m["decisions"] == 2 and m["favorable_rate"] == 0.5 and m["override_rate"] == 0.0
    assert m["overtrust_rate"] == 1.0 and m["accuracy"] == 0.0 and m["mean_ai_confidence"] == 0.4
    assert (m["overtrust_effective_n"], m["scored_decisions"]) == (pytest.approx(1.0), 1)
    assert (m["undertrust_rate"], m["undertrust_effective_n"], m["undertrust_rate_ci"]) == (None, 0, [0, 1])
    assert m["disparity"] == {
        "favorable_rate_difference": 0.0,
        "disparate_impact_ratio": 1.0,
        "override_rate_difference": -0.5,
    }


def _random_specs(n: int, seed_value: int) -> list[Spec]:
    rng = random.Random(seed_value)
    now = timezone.now()
    specs = []
    values = ["approve", "deny", "Approved", "refer"]
    for _ in range(n):
        subgroups = {
            "gender": rng.choice(["female", "male", "nonbinary"]),
            "age_group": rng.choice(["18-25", "26-40", "41-65", "65+"]),
        }
        if rng.random() < 0.3:
            subgroups["custom"] = {"region": rng.choice(["north", "south"])}
        ai = rng.choice(values)
        human = ai if rng.random() < 0.7 else rng.choice(values)
        specs.append(
            Spec(
                ai=ai,
                human=human,
                subgroups=subgroups,
                outcome=rng.choice(values) if rng.random() < 0.4 else None,
                confidence=round(rng.random(), 3) if rng.random() < 0.8 else None,
                model_id=rng.choice(["credit-v1", "credit-v2"]),
                timestamp=now - dt.timedelta(days=rng.randrange(0, 40), minutes=rng.randrange(0, 600)),
            )
        )
    return specs


def _frame(specs: list[Spec]) -> pd.DataFrame:
    rows = []
    for s in specs:
        flat = {k: v for k, v in s.subgroups.items() if k != "custom"}
        flat.update({f"custom.{k}": v for k, v in s.subgroups.get("custom", {}).items()})
        for attribute, group in flat.items():
            rows.append({
                "attribute": attribute,
                "group": group,
                "model_id": s.model_id,
                "day": s.timestamp.astimezone(dt.UTC).date(),
                "favorable": norm(s.human) in DEFAULT_FAVORABLE_VALUES,
                "ai_favorable": norm(s.ai) in DEFAULT_FAVORABLE_VALUES,
                "agree": norm(s.ai) == norm(s.human),
                **_stakes(s),
                "confidence": s.confidence,
                "correct": None if s.outcome is None else norm(s.human) == norm(s.outcome),
            })  # fmt: skip
    return pd.DataFrame(rows)


def _stakes(s: Spec) -> dict:
    """A decision's stake weights by hand (docs/reference/bias.md, Over- and under-trust of a group)."""
    f = norm(s.ai) == norm(s.human)
    scored = s.confidence is not None or s.outcome is not None
    # Only a stated confidence carries a stake: an outcome alone scores the decision but weighs
    # nothing (docs/reference/calibration.md).
    p = s.confidence
    wo, wu = (0.0, 0.0) if p is None else (max(0.0, 1 - 2 * p), max(0.0, 2 * p - 1))
    return {"scored": scored, "wo": wo, "fwo": f * wo, "wu": wu, "uwu": (not f) * wu}


def test_subgroup_figures_equal_pandas_on_5000_random_decisions(api):
    specs = _random_specs(5000, seed_value=20261121)
    seed("acme", specs)
    frame = _frame(specs)
    today = timezone.now().date()
    start = today - dt.timedelta(days=20)
    window = frame[(frame.model_id == "credit-v1") & (frame.day >= start) & (frame.day <= today)]

    report = api.get(
        "/v1/bias/subgroups", {"model_id": "credit-v1", "from": start.isoformat(), "to": today.isoformat()}
    ).json()
    assert report["from"] == start.isoformat() and report["to"] == today.isoformat()
    assert set(report["attributes"]) == {"gender", "age_group", "custom.region"}
    for attribute, part in window.groupby("attribute"):
        expected = part.groupby("group").agg(
            decisions=("favorable", "size"),
            favorable_rate=("favorable", "mean"),
            ai_favorable_rate=("ai_favorable", "mean"),
            agreement_rate=("agree", "mean"),
            fwo=("fwo", "sum"),
            wo=("wo", "sum"),
            uwu=("uwu", "sum"),
            wu=("wu", "sum"),
            scored=("scored", "sum"),
            mean_ai_confidence=("confidence", "mean"),
        )
        with_outcome = part[part.correct.notna()]
        accuracy = with_outcome.groupby("group")["correct"].mean()
        reference = expected.sort_values("decisions", ascending=False, kind="stable").index[0]
        got = groups_of(report, attribute)
        assert report["attributes"][attribute]["reference_group"] == reference
        assert set(got) == set(expected.index)
        for group, row in expected.iterrows():
            g = got[group]
            assert g["decisions"] == row.decisions
            for name in ("favorable_rate", "ai_favorable_rate", "agreement_rate", "mean_ai_confidence"):
                assert g[name] == pytest.approx(row[name], abs=1e-6), (attribute, group, name)
            assert g["scored_decisions"] == row.scored
            assert g["overtrust_rate"] == (pytest.approx(row.fwo / row.wo, rel=1e-9) if row.wo else None)
            assert g["undertrust_rate"] == (pytest.approx(row.uwu / row.wu, rel=1e-9) if row.wu else None)
            assert g["override_rate"] == pytest.approx(1 - row.agreement_rate, abs=1e-6)
            assert g["accuracy"] == pytest.approx(float(accuracy[group]), abs=1e-6)
            ref = expected.loc[reference]
            assert g["disparity"]["favorable_rate_difference"] == pytest.approx(
                row.favorable_rate - ref.favorable_rate, abs=1e-6
            )
            assert g["disparity"]["disparate_impact_ratio"] == pytest.approx(
                row.favorable_rate / ref.favorable_rate, abs=1e-6
            )


def test_outcome_disparity_and_disparate_impact_agree_with_fairlearn(api):
    rng = random.Random(7)
    specs = []
    for group, rate, size in [("a", 0.72, 180), ("b", 0.41, 150)]:
        for _ in range(size):
            value = "approve" if rng.random() < rate else "deny"
            specs.append(Spec(ai=value, human=value, subgroups={"ethnicity": group}))
    decisions = seed("acme", specs)
    body = api.post(
        "/v1/detect-bias",
        {"decision_id": decisions[0].decision_id, "subgroups": {"ethnicity": "a"}},
        format="json",
    ).json()
    y_pred = [int(norm(s.human) in DEFAULT_FAVORABLE_VALUES) for s in specs]
    sensitive = [s.subgroups["ethnicity"] for s in specs]
    dpd = demographic_parity_difference(y_pred, y_pred, sensitive_features=sensitive)
    dpr = demographic_parity_ratio(y_pred, y_pred, sensitive_features=sensitive)
    by_type = {f["bias_type"]: f for f in body["findings"]}
    assert by_type["outcome_disparity"]["value"] == pytest.approx(dpd, abs=1e-6)
    assert by_type["disparate_impact"]["value"] == pytest.approx(dpr, abs=1e-6)


def test_impact_ratio_is_against_the_highest_rate_and_its_minimum_is_fairlearns_ratio(api):
    rng = random.Random(1607)
    specs = []
    # the largest group is not the one with the highest favourable rate; "tiny" (under 30) has
    # the highest rate of all but is not the four-fifths yardstick
    for group, rate, size in [("large", 0.45, 220), ("high", 0.7, 90), ("low", 0.3, 60), ("tiny", 1.0, 6)]:
        for i in range(size):
            value = "approve" if (i < round(rate * size)) else "deny"
            specs.append(Spec(ai=value, human=value, subgroups={"ethnicity": group}))
    rng.shuffle(specs)
    seed("acme", specs)
    report = api.get("/v1/bias/subgroups", {"attribute": "ethnicity"}).json()
    ethnicity = report["attributes"]["ethnicity"]
    assert ethnicity["reference_group"] == "large" and ethnicity["impact_reference_group"] == "high"
    groups = groups_of(report, "ethnicity")
    assert groups["high"]["impact_ratio"] == 1.0
    assert groups["large"]["impact_ratio"] == round(99 / 220 / (63 / 90), 6)
    assert groups["low"]["impact_ratio"] == round(18 / 60 / (63 / 90), 6)  # under 0.8: adverse impact
    assert groups["tiny"]["impact_ratio"] == round(1 / 0.7, 6)
    # disparity stays against the largest group
    assert groups["high"]["disparity"]["disparate_impact_ratio"] == round(0.7 / 0.45, 6)

    large_groups = [s for s in specs if s.subgroups["ethnicity"] != "tiny"]
    y_pred = [int(norm(s.human) in DEFAULT_FAVORABLE_VALUES) for s in large_groups]
    sensitive = [s.subgroups["ethnicity"] for s in large_groups]
    ratio = demographic_parity_ratio(y_pred, y_pred, sensitive_features=sensitive)
    assert min(g["impact_ratio"] for name, g in groups.items() if name != "tiny") == pytest.approx(
        ratio, abs=1e-6
    )


def test_amplification_counts_sum_the_daily_statistics(db):
    now = timezone.now()
    specs = (
        [Spec(ai="approve", human="approve", subgroups={"gender": "f"}, model_version="2")] * 3
        + [Spec(ai=" Approve", human="DENY", subgroups={"gender": "f"})] * 2
        + [Spec(ai="deny", human="deny", subgroups={"gender": "m"}, model_version="1")] * 4
        + [Spec(ai="deny", human="deny", subgroups={"gender": "m"}, timestamp=now - dt.timedelta(days=40))]
        * 5
        + [Spec(ai="deny", human="deny", subgroups={"gender": "m"}, model_id="other")] * 6
        + [Spec(ai="deny", human="deny", subgroups={"age_group": "18-25"})] * 7
    )
    seed("acme", specs)
    since = now - dt.timedelta(days=30)
    counts = amplification_counts(
        customer="acme", model_id="credit-v1", model_version=None, attribute="gender", since=since
    )
    assert counts == [
        GroupValueCount("f", "approve", "approve", 3),
        GroupValueCount("f", "approve", "deny", 2),
        GroupValueCount("m", "deny", "deny", 4),
    ]
    versioned = amplification_counts(
        customer="acme", model_id="credit-v1", model_version="2", attribute="gender", since=since
    )
    assert versioned == [
        GroupValueCount("f", "approve", "approve", 3),
        GroupValueCount("f", "approve", "deny", 2),
    ]
    older = amplification_counts(
        customer="acme",
        model_id="credit-v1",
        model_version=None,
        attribute="gender",
        since=now - dt.timedelta(days=41),
    )
    assert GroupValueCount("m", "deny", "deny", 9) in older
    assert (
        amplification_counts(
            customer="globex", model_id="credit-v1", model_version=None, attribute="gender", since=since
        )
        == []
    )


def test_a_late_outcome_moves_accuracy_and_calibration_counts(api):
    # No confidence, so the outcome decides the category (docs/reference/calibration.md).
    decision = seed("acme", [Spec(ai="approve", human="approve", subgroups={"gender": "f"})])[0]
    before = groups_of(api.get("/v1/bias/subgroups").json(), "gender")["f"]
    # neither a confidence nor an outcome: unscored, no stake, no rate
    assert before["accuracy"] is None and before["overtrust_rate"] is None
    assert (before["scored_decisions"], before["unscored_decisions"], before["overtrust_effective_n"]) == (
        0,
        1,
        0,
    )
    response = api.post("/v1/log", {"decision_id": decision.decision_id, "outcome": "deny"}, format="json")
    assert response.status_code == 201 and response.json()["calibration_category"] == "OVERTRUSTING"
    after = groups_of(api.get("/v1/bias/subgroups").json(), "gender")["f"]
    assert after["decisions"] == 1
    # An outcome without a confidence scores the decision but carries no stake and is no incident.
    assert after["accuracy"] == 0.0 and after["ai_accuracy"] == 0.0 and after["overtrust_rate"] is None
    assert (after["scored_decisions"], after["automation_bias_incidents"]) == (1, 0)


def test_subgroups_query_validation(api):
    for params in ({"attribute": "race"}, {"from": "nope"}, {"from": "2026-02-01", "to": "2026-01-01"},
                   {"attribute": "custom."}):  # fmt: skip
        response = api.get("/v1/bias/subgroups", params)
        assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR", params


def test_extreme_or_unstorable_query_values_are_400_not_500(api):
    for params in ({"model_id": "a\x00b"}, {"attribute": "custom.a\x00"}):
        response = api.get("/v1/bias/subgroups", params)
        assert response.status_code == 400, params
    assert api.get("/v1/bias/subgroups", {"to": "0001-01-02"}).status_code == 200
    assert api.get("/v1/bias/feed", {"to": "9999-12-31"}).status_code == 200  # the last representable day
    assert api.get("/v1/bias/feed", {"to": "10000-01-01"}).status_code == 400
    response = api.post(
        "/v1/detect-bias", {"decision_id": "d", "subgroups": {"gender": "a\x00"}}, format="json"
    )
    assert response.status_code == 400
