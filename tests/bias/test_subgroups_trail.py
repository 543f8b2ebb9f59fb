"""Subgroups attached by POST /detect-bias are in the audit trail (docs/reference/bias.md, Subgroups),
so the subgroup figures are reproducible from the trail alone."""

import random
from typing import Any

import pytest

from bias.domain import DEFAULT_FAVORABLE_VALUES
from tests.audit.factories import all_entries, decision_body

pytestmark = pytest.mark.django_db


def detect(api, decision_id: str, subgroups: dict[str, Any]) -> dict[str, Any]:
    response = api.post(
        "/v1/detect-bias", {"decision_id": decision_id, "subgroups": subgroups}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def norm(value: str | None) -> str:
    return "" if value is None else value.strip().casefold()


def flat(subgroups: dict[str, Any]) -> dict[str, str]:
    out = {k: v for k, v in subgroups.items() if k != "custom"}
    out.update({f"custom.{k}": v for k, v in (subgroups.get("custom") or {}).items()})
    return out


def figures_from_trail(entries: list[dict[str, Any]], attribute: str) -> dict[str, dict[str, Any]]:
    """GET /bias/subgroups' counting figures recomputed from the entries alone: per decision, its
    values from its `decision` entry, its outcome from its latest entry, its subgroups from its
    latest `subgroups_attached` entry, else from the `decision` entry."""
    latest: dict[str, dict[str, Any]] = {}
    subgroups: dict[str, dict[str, Any]] = {}
    for entry in sorted(entries, key=lambda e: e["sequence"]):
        latest[entry["decision_id"]] = entry
        if entry["type"] in ("decision", "subgroups_attached"):
            subgroups[entry["decision_id"]] = entry["subgroups"]
    groups: dict[str, dict[str, int]] = {}
    for decision_id, entry in latest.items():
        group = flat(subgroups[decision_id]).get(attribute)
        if group is None:
            continue
        g = groups.setdefault(
            group, {"decisions": 0, "favorable": 0, "overrides": 0, "outcomes": 0, "correct": 0}
        )
        g["decisions"] += 1
        g["favorable"] += norm(entry["user_decision"]) in DEFAULT_FAVORABLE_VALUES
        g["overrides"] += norm(entry["user_decision"]) != norm(entry["ai_recommendation"])
        if entry["outcome"] is not None:
            g["outcomes"] += 1
            g["correct"] += norm(entry["outcome"]) == norm(entry["user_decision"])
    return {
        name: {
            "decisions": g["decisions"],
            "favorable_rate": round(g["favorable"] / g["decisions"], 6),
            "override_rate": round(g["overrides"] / g["decisions"], 6),
            "accuracy": round(g["correct"] / g["outcomes"], 6) if g["outcomes"] else None,
        }
        for name, g in groups.items()
    }


def test_an_attachment_appends_a_subgroups_attached_entry_and_the_chain_verifies(api):
    body = decision_body(subgroups={"gender": "female"})
    assert api.post("/v1/log", body, format="json").status_code == 201
    detect(api, body["decision_id"], {"gender": "male", "custom": {"region": " north "}})
    detect(api, body["decision_id"], {"gender": "male", "custom": {"region": "north"}})  # the same again

    entries = all_entries(api, decision_id=body["decision_id"])
    assert [e["type"] for e in sorted(entries, key=lambda e: e["sequence"])] == [
        "decision",
        "subgroups_attached",
    ]
    attached = next(e for e in entries if e["type"] == "subgroups_attached")
    assert attached["subgroups"] == {"gender": "male", "custom": {"region": "north"}}
    assert (
        attached["user_decision"] == body["user_decision"] and attached["decision_id"] == body["decision_id"]
    )
    verify = api.get("/v1/audit-trail/verify").json()
    assert verify["valid"] is True and verify["entries_checked"] == 2

    # subgroups posted before the decision is logged wait: no entry until there is a decision;
    # a decision that arrives without subgroups of its own takes them, and the trail says so
    detect(api, "not-yet", {"gender": "female"})
    assert all_entries(api, decision_id="not-yet") == []
    assert api.post("/v1/log", decision_body(decision_id="not-yet"), format="json").status_code == 201
    entries = sorted(all_entries(api, decision_id="not-yet"), key=lambda e: e["sequence"])
    assert [(e["type"], e["subgroups"]) for e in entries] == [
        ("decision", {}),
        ("subgroups_attached", {"gender": "female"}),
    ]
    assert entries[1]["sequence"] == entries[0]["sequence"] + 1
    # one that carries its own subgroups replaces the waiting ones: its own entry says it all
    detect(api, "own", {"gender": "female"})
    assert (
        api.post(
            "/v1/log", decision_body(decision_id="own", subgroups={"gender": "male"}), format="json"
        ).status_code
        == 201
    )
    assert [e["type"] for e in all_entries(api, decision_id="own")] == ["decision"]
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_subgroup_figures_are_reproducible_from_the_audit_trail_alone(api, applier):
    rng = random.Random(30)
    for i in range(0, 120, 7):  # posted before their decisions are logged (some carry none)
        detect(api, f"trail-{i}", {"gender": rng.choice(["female", "male"]), "ethnicity": "a"})
    bodies = []
    for i in range(120):
        ai = rng.choice(["approve", "deny"])
        body = decision_body(
            decision_id=f"trail-{i}",
            ai_recommendation=ai,
            user_decision=ai if rng.random() < 0.8 else rng.choice(["approve", "deny", "refer"]),
            subgroups=(
                {"gender": rng.choice(["female", "male"]), "age_group": rng.choice(["18-34", "35+"])}
                if i % 2
                else ...
            ),
            outcome=rng.choice(["approve", "deny"]) if i % 3 == 0 else ...,
        )
        bodies.append(body)
    for start in range(0, len(bodies), 40):
        response = api.post("/v1/log/batch", {"decisions": bodies[start : start + 40]}, format="json")
        assert response.status_code in (200, 201, 207), response.content
    for body in rng.sample(bodies, 30):  # re-attached later: a new group, or a new attribute set
        detect(api, body["decision_id"], {"gender": rng.choice(["female", "male", "nonbinary"])})
    for body in bodies[1::10]:  # a late outcome after the attachment
        api.post("/v1/log", {"decision_id": body["decision_id"], "outcome": "approve"}, format="json")

    entries = all_entries(api)
    assert any(e["type"] == "subgroups_attached" for e in entries)
    report = api.get("/v1/bias/subgroups").json()
    for attribute in ("gender", "age_group", "ethnicity"):
        served = {
            g["group"]: {k: g[k] for k in ("decisions", "favorable_rate", "override_rate", "accuracy")}
            for g in report["attributes"][attribute]["groups"]
        }
        assert served == figures_from_trail(entries, attribute)
