"""GET /bias/subgroups' stake-weighted over- and under-trust rates (docs/reference/bias.md, Over- and
under-trust of a group): the per-user formulas of audit/measures.py over each group's decisions,
Wilson intervals as statsmodels computes them, rates that tell an over-trusting group from a
calibrated one, and the same statistics rows whichever door the decisions came through."""

import random
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from statsmodels.stats.proportion import proportion_confint

from audit import measures
from bias.models import SubgroupDailyStat
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db

VALUES = ["approve", "deny", "Approve ", "refer"]


def _bodies(n: int, seed: int) -> list[dict[str, Any]]:
    """Decisions of every kind: with a confidence (some at exactly 0.5), an outcome, both or
    neither; two attributes; a few users and models."""
    rng = random.Random(seed)
    bodies = []
    for i in range(n):
        ai = rng.choice(VALUES[:3])
        body: dict[str, Any] = {
            "decision_id": f"s{seed}-{i}",
            "user_id": rng.choice(["u1", "u2", "u3"]),
            "model_id": rng.choice(["m1", "m2"]),
            "ai_recommendation": ai,
            "user_decision": ai if rng.random() < 0.6 else rng.choice(VALUES),
            "subgroups": {"gender": rng.choice(["f", "m", "x"]), "age_group": rng.choice(["18-34", "35+"])},
        }
        kind = rng.random()
        if kind < 0.55:
            body["ai_confidence"] = rng.choice([0.5, round(rng.random(), 4), rng.random()])
        if 0.4 < kind < 0.85:
            body["outcome"] = rng.choice(VALUES[:2])
        bodies.append(body)
    return bodies


def _record(body: dict[str, Any], outcome: str | None = None) -> measures.Record:
    outcome = outcome if outcome is not None else body.get("outcome")
    category = measures.record_category(
        ai_recommendation=body["ai_recommendation"],
        user_decision=body["user_decision"],
        confidence=body.get("ai_confidence"),
        outcome=outcome,
    )
    return measures.Record(
        body["ai_recommendation"], body["user_decision"], body.get("ai_confidence"), outcome, None, category
    )


def _groups(api, attribute: str, **params: Any) -> dict[str, dict[str, Any]]:
    response = api.get("/v1/bias/subgroups", {"attribute": attribute, **params})
    assert response.status_code == 200, response.content
    return {g["group"]: g for g in response.json()["attributes"][attribute]["groups"]}


def _post(api, path: str, body: dict[str, Any]) -> None:
    response = api.post(path, body, format="json")
    assert response.status_code in (200, 201), response.content


def test_group_rates_are_the_per_user_formulas_over_the_groups_decisions_and_statsmodels_wilson(api):
    bodies = _bodies(400, seed=27)
    for start in range(0, len(bodies), 100):
        _post(api, "/v1/log/batch", {"decisions": bodies[start : start + 100]})
    late = {b["decision_id"]: "deny" for b in bodies[::7] if "outcome" not in b}  # late outcomes move rows
    for decision_id, outcome in late.items():
        _post(api, "/v1/log", {"decision_id": decision_id, "outcome": outcome})
    moved = {b["decision_id"]: "x" for b in bodies[1::11]}  # and so do later attachments
    for decision_id, group in moved.items():
        _post(api, "/v1/detect-bias", {"decision_id": decision_id, "subgroups": {"gender": group}})

    for attribute in ("gender", "age_group"):
        got = _groups(api, attribute)
        by_group: dict[str, list[measures.Record]] = {}
        for b in bodies:
            group = b["subgroups"][attribute]
            if b["decision_id"] in moved:  # an attachment replaces all the subgroups
                if attribute != "gender":
                    continue
                group = moved[b["decision_id"]]
            by_group.setdefault(group, []).append(_record(b, late.get(b["decision_id"])))
        assert set(got) == set(by_group)
        for group, records in by_group.items():
            sums = measures.add_sums(measures.contribution(r) for r in records)
            expected = measures.figures(sums, measures.Thresholds())
            g = got[group]
            assert (g["decisions"], g["scored_decisions"]) == (len(records), expected["scored_decisions"])
            assert g["unscored_decisions"] == expected["unscored_decisions"] > 0
            assert g["automation_bias_incidents"] == expected["automation_bias_incidents"]
            for name in ("overtrust", "undertrust"):
                rate, n_eff = g[f"{name}_rate"], g[f"{name}_effective_n"]
                assert rate == pytest.approx(expected[f"{name}_rate"], rel=1e-9, abs=1e-12), (group, name)
                assert n_eff == pytest.approx(expected[f"{name}_effective_n"], rel=1e-9), (group, name)
                assert g[f"{name}_rate_ci"] == pytest.approx(expected[f"{name}_rate_ci"], rel=1e-9, abs=1e-12)
                low, high = proportion_confint(rate * n_eff, n_eff, alpha=0.05, method="wilson")
                assert g[f"{name}_rate_ci"] == pytest.approx([low, high], rel=1e-9, abs=1e-12), (group, name)


def test_a_group_with_no_stake_has_null_rates_effective_n_0_and_the_whole_interval(api):
    # Confidence exactly 0.5 weighs nothing either way; no confidence and no outcome is unscored.
    _post(api, "/v1/log/batch", {"decisions": [
        {"decision_id": "h1", "user_id": "u1", "ai_recommendation": "approve", "user_decision": "approve",
         "ai_confidence": 0.5, "subgroups": {"gender": "f"}},
        {"decision_id": "h2", "user_id": "u1", "ai_recommendation": "approve", "user_decision": "deny",
         "subgroups": {"gender": "f"}},
    ]})  # fmt: skip
    f = _groups(api, "gender")["f"]
    assert (f["decisions"], f["scored_decisions"], f["unscored_decisions"], f["coverage"]) == (2, 1, 1, 0.5)
    for name in ("overtrust", "undertrust"):
        assert (f[f"{name}_rate"], f[f"{name}_effective_n"], f[f"{name}_rate_ci"]) == (None, 0, [0, 1])


def test_rates_tell_a_group_whose_reviewers_overtrust_from_a_calibrated_one(api):
    """Seeded simulation: the same AI (calibrated confidences) for both groups; group "a"'s
    reviewers follow it 90 % of the time whatever its confidence, group "b"'s follow it with
    the probability it is right (probability matching)."""
    rng = random.Random(2027)
    bodies = []
    for group, follows in (("a", lambda c: 0.9), ("b", lambda c: c)):
        for i in range(300):
            c = rng.random()
            ai = rng.choice(["approve", "deny"])
            other = "deny" if ai == "approve" else "approve"
            right = rng.random() < c
            bodies.append({
                "decision_id": f"{group}{i}", "user_id": f"{group}-{i % 5}", "ai_recommendation": ai,
                "user_decision": ai if rng.random() < follows(c) else other, "ai_confidence": c,
                "outcome": ai if right else other, "subgroups": {"ethnicity": group},
            })  # fmt: skip
    for start in range(0, len(bodies), 150):
        _post(api, "/v1/log/batch", {"decisions": bodies[start : start + 150]})
    groups = _groups(api, "ethnicity")
    a, b = groups["a"], groups["b"]
    assert a["overtrust_rate"] == pytest.approx(0.9, abs=0.06)
    assert b["overtrust_rate"] < 0.4 and a["overtrust_rate_ci"][0] > b["overtrust_rate_ci"][1]
    assert a["overtrust_rate_ci"][0] > 0.5 > b["overtrust_rate_ci"][1]  # the category's threshold
    # Over-trusters override little: their under-trust is low, the calibrated group's moderate.
    assert a["undertrust_rate"] < b["undertrust_rate"]


def _rows(customer_id: str) -> list[tuple]:
    """The customer's statistics rows that count a decision (a row emptied by a move keeps
    count 0 and, its weights being integers, exactly 0 weight)."""
    fields = [
        f.attname for f in SubgroupDailyStat._meta.concrete_fields if f.attname not in ("id", "customer_id")
    ]
    rows = SubgroupDailyStat.objects.filter(customer_id=customer_id).values_list(*fields)
    assert all(any(row[-7:]) == bool(row[-7]) for row in rows)
    return sorted(row for row in rows if row[-7])


def _changes(api, bodies: list[dict[str, Any]]) -> None:
    """The same later writes for both customers: late outcomes, re-attachments, a pending one."""
    for b in bodies[::5]:
        if "outcome" not in b:
            _post(api, "/v1/log", {"decision_id": b["decision_id"], "outcome": "approve"})
    for b in bodies[2::9]:
        _post(api, "/v1/detect-bias", {"decision_id": b["decision_id"], "subgroups": {"gender": "y"}})
    _post(api, "/v1/detect-bias", {"decision_id": "late-one", "subgroups": {"gender": "p"}})
    _post(api, "/v1/log", {"decision_id": "late-one", "user_id": "u9", "ai_recommendation": "deny",
                           "user_decision": "deny", "ai_confidence": 0.2})  # fmt: skip


def test_a_batch_and_the_same_decisions_one_by_one_write_the_same_rows_and_the_migration_rebuilds_them(
    applier,
):
    batch = client_for(make_key("by-batch", "enterprise").value)
    single = client_for(make_key("one-by-one", "enterprise").value)
    bodies = _bodies(120, seed=30)
    for start in range(0, len(bodies), 40):
        _post(batch, "/v1/log/batch", {"decisions": bodies[start : start + 40]})
    for body in bodies:
        _post(single, "/v1/log", body)
    _changes(batch, bodies)
    _changes(single, bodies)
    rows = _rows("by-batch")
    assert rows == _rows("one-by-one")
    assert any(row[-4] for row in rows) and any(row[-2] for row in rows)  # weights were written

    # The migration rebuilds exactly these rows from the stored decisions and attachments.
    rebuild = __import__("bias.migrations.0003_stake_weights", fromlist=["rebuild"]).rebuild
    rebuild(apps, None)
    assert _rows("by-batch") == rows and _rows("one-by-one") == rows


def _query_count(api, params: dict[str, str]) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert api.get("/v1/bias/subgroups", params).status_code == 200
    return len(queries)


def test_the_subgroup_figures_cost_the_same_queries_for_2_groups_and_40(api):
    few = [b | {"decision_id": f"few-{i}"} for i, b in enumerate(_bodies(60, seed=1))]
    _post(api, "/v1/log/batch", {"decisions": few})
    baseline = _query_count(api, {})
    assert baseline <= 4, baseline  # the key, the favourable values, the figures (one GROUP BY)
    many = []
    for i, b in enumerate(_bodies(400, seed=2)):
        b["subgroups"] = {"gender": f"g{i % 40}", "age_group": b["subgroups"]["age_group"]}
        many.append(b | {"decision_id": f"many-{i}"})
    for start in range(0, len(many), 200):
        _post(api, "/v1/log/batch", {"decisions": many[start : start + 200]})
    assert len(_groups(api, "gender")) == 43
    assert _query_count(api, {}) == baseline
    exact = {"from": "2026-01-01T06:00:00Z"}
    assert _query_count(api, exact) <= baseline + 3  # and the edge days, one grouped read each
