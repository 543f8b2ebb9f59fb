"""Which test a finding gets, its q-value over the whole analysis, and the groups too small to test
(docs/reference/bias.md, Significance), over HTTP, recomputed with scipy and statsmodels."""

import random
from fractions import Fraction

import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from tests.bias.factories import Spec, seed

pytestmark = pytest.mark.django_db


def detect(api, decision_id, subgroups):
    response = api.post(
        "/v1/detect-bias", {"decision_id": decision_id, "subgroups": subgroups}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def groups_of(specs, attribute):
    """Per group: (favourable, AI favourable, overrides, decisions, wrong, with outcome)."""
    out: dict[str, list[int]] = {}
    for s in specs:
        if attribute not in s.subgroups:
            continue
        g = out.setdefault(s.subgroups[attribute], [0, 0, 0, 0, 0, 0])
        g[0] += s.human == "approve"
        g[1] += s.ai == "approve"
        g[2] += s.ai != s.human
        g[3] += 1
        if s.outcome is not None:
            g[4] += s.outcome != s.human
            g[5] += 1
    return out


def independent_p_values(specs, attribute):
    """Every comparison of docs/reference/bias.md, Findings, with its p-value from scipy (Fisher) or
    statsmodels (z-test): {(attribute, bias_type, group): (reference, test, p)}, and the size of the
    family: every pair of testable groups of each rate."""
    groups = groups_of(specs, attribute)
    family = 0
    metrics = {
        "outcome_disparity": (0, 3, True),
        "recommendation_disparity": (1, 3, True),
        "override_disparity": (2, 3, False),
        "accuracy_disparity": (4, 5, False),
    }
    out = {}
    for bias_type, (xi, ni, higher) in metrics.items():
        rates = {g: (c[xi], c[ni]) for g, c in groups.items() if c[ni] > 0}
        testable = sum(n >= 5 for _, n in rates.values())
        family += testable * (testable - 1) // 2 if len(rates) > 1 else 0
        eligible = {g: r for g, r in rates.items() if r[1] >= 30} or rates
        sign = 1 if higher else -1
        ref = max(eligible, key=lambda g: (sign * Fraction(*eligible[g]), eligible[g][1], g))
        xr, nr = rates[ref]
        for g, (x, n) in rates.items():
            if g == ref or min(n, nr) < 5:
                continue
            hits, total = x + xr, n + nr
            if min(n, nr) < 30 or min(n, nr) * min(hits, total - hits) < 5 * total:
                test, p = "fisher_exact", fisher_exact([[x, n - x], [xr, nr - xr]]).pvalue
            else:
                test, p = "z_test", proportions_ztest([x, xr], [n, nr])[1]
            out[(attribute, bias_type, g)] = (ref, test, float(p))
    return out, family


def random_specs(rng, attribute, sizes, favourable):
    specs = []
    for group, n in sizes.items():
        for _ in range(n):
            ai = "approve" if rng.random() < favourable[group] else "deny"
            human = ai if rng.random() < 0.85 else ("deny" if ai == "approve" else "approve")
            outcome = (ai if rng.random() < 0.7 else "other") if rng.random() < 0.5 else None
            specs.append(Spec(ai=ai, human=human, outcome=outcome, subgroups={attribute: group}))
    return specs


def test_q_values_adjust_every_comparison_of_the_analysis_as_statsmodels_fdr_bh_does(api):
    rng = random.Random(2027)
    gender = random_specs(
        rng, "gender", {"f": 150, "m": 120, "x": 25, "y": 3}, {"f": 0.4, "m": 0.55, "x": 0.5, "y": 0.3}
    )
    age = random_specs(rng, "age_group", {"young": 90, "old": 60}, {"young": 0.5, "old": 0.38})
    for i, s in enumerate(age):  # the same decisions carry both attributes
        gender[i].subgroups = {**gender[i].subgroups, **s.subgroups}
    specs = gender
    decisions = seed("acme", specs)
    body = detect(
        api, decisions[0].decision_id, {"gender": "f", "age_group": decisions[0].subgroups["age_group"]}
    )

    expected, family = {}, 0
    for attribute in ("age_group", "gender"):
        comparisons, pairs = independent_p_values(specs, attribute)
        expected.update(comparisons)
        family += pairs
    keys = list(expected)
    # the pairs not compared with the reference count in the family as never rejected (p = 1)
    padded = [expected[k][2] for k in keys] + [1.0] * (family - len(keys))
    _, q_values, _, _ = multipletests(padded, method="fdr_bh")
    q_by_key = dict(zip(keys, q_values[: len(keys)], strict=True))
    assert len(keys) >= 12 and family == 4 * 1 + 3 * 3 + 1 * 3  # both attributes' comparisons are one family

    assert body["findings"]
    for f in body["findings"]:
        key = (
            f["attribute"],
            "outcome_disparity" if f["bias_type"] == "disparate_impact" else f["bias_type"],
            f["group"],
        )
        if f["group"] == "y":
            assert (f["testable"], f["test"], f["p_value"], f["q_value"]) == (False, None, None, None)
            assert f["severity"] == "low"
            continue
        reference, test, p = expected[key]
        assert f["reference_group"] == reference
        assert f["testable"] is True
        assert f["test"] == test
        assert f["p_value"] == pytest.approx(p, rel=1e-9)
        assert f["q_value"] == pytest.approx(q_by_key[key], rel=1e-9)
        if f["severity"] in ("medium", "high", "critical"):
            assert f["q_value"] < 0.05 and min(f["sample_sizes"].values()) >= 30


def test_one_decision_against_52_is_not_tested_and_is_no_finding(api):
    specs = [Spec(ai="approve", human="approve", subgroups={"gender": "b"}) for _ in range(52)]
    specs.append(Spec(ai="deny", human="deny", subgroups={"gender": "a"}))
    decisions = seed("acme", specs)
    body = detect(api, decisions[0].decision_id, {"gender": "b"})
    # untestable, so not a finding: listed among the comparisons (docs/reference/bias.md)
    assert not [f for f in body["findings"] if f["bias_type"] == "outcome_disparity"]
    outcome = [f for f in body["comparisons"] if f["bias_type"] == "outcome_disparity"]
    assert len(outcome) == 1 and outcome[0]["finding"] is False
    assert outcome[0]["group"] == "a" and outcome[0]["value"] == 1.0
    assert (outcome[0]["testable"], outcome[0]["p_value"], outcome[0]["q_value"]) == (False, None, None)
    assert body["severity"] == "none" and body["bias_detected"] is False


def test_five_decisions_against_52_get_fishers_exact_test(api):
    specs = [Spec(ai="approve", human="approve", subgroups={"gender": "b"}) for _ in range(52)]
    specs += [Spec(ai="deny", human="deny", subgroups={"gender": "a"}) for _ in range(5)]
    decisions = seed("acme", specs)
    body = detect(api, decisions[0].decision_id, {"gender": "b"})
    outcome = next(f for f in body["findings"] if f["bias_type"] == "outcome_disparity")
    assert outcome["test"] == "fisher_exact"
    assert outcome["p_value"] == pytest.approx(fisher_exact([[0, 5], [52, 0]]).pvalue, rel=1e-12)
    assert outcome["severity"] == "low"  # a group under 30 never yields more


def test_a_large_significant_gap_keeps_its_severity_and_shows_its_q_value_on_the_feed(api):
    specs = []
    for group, rate in (("m", 0.8), ("f", 0.4)):
        specs += [
            Spec(ai=v, human=v, subgroups={"gender": group})
            for v in ["approve"] * round(rate * 100) + ["deny"] * round((1 - rate) * 100)
        ]
    decisions = seed("acme", specs)
    body = detect(api, decisions[0].decision_id, {"gender": "m"})
    outcome = next(f for f in body["findings"] if f["bias_type"] == "outcome_disparity")
    assert outcome["test"] == "z_test" and outcome["severity"] == "critical"
    # the family: outcome and recommendation rates (the same counts here); override rates are all 0
    _, q, _, _ = multipletests([outcome["p_value"]] * 2 + [1.0], method="fdr_bh")
    assert outcome["q_value"] == pytest.approx(q[0], rel=1e-12)
    feed = api.get(f"/v1/bias/feed/{body['alert_id']}").json()
    assert feed["findings"] == body["findings"]
