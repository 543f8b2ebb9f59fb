"""Subgroups arriving with POST /log and POST /calibrate, or before them, and late
outcomes through POST /log: the statistics follow over HTTP."""

import pytest

pytestmark = pytest.mark.django_db


def log(api, **body):
    body.setdefault("user_id", "u1")
    response = api.post("/v1/log", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def gender_groups(api, **params):
    report = api.get("/v1/bias/subgroups", {"attribute": "gender", **params}).json()
    return {g["group"]: g for g in report["attributes"].get("gender", {}).get("groups", [])}


def test_subgroups_posted_before_post_log_count_when_the_decision_arrives(api):
    response = api.post(
        "/v1/detect-bias", {"decision_id": "d-1", "subgroups": {"gender": "f"}}, format="json"
    )
    assert response.status_code == 200 and response.json()["bias_detected"] is False
    assert gender_groups(api) == {}
    log(api, decision_id="d-1", model_id="m1", ai_recommendation="approve", user_decision="approve")
    groups = gender_groups(api)
    assert groups["f"]["decisions"] == 1 and groups["f"]["favorable_rate"] == 1.0


def test_subgroups_on_post_log_and_post_calibrate_are_counted(api):
    log(api, model_id="m1", ai_recommendation="approve", user_decision="deny", subgroups={"gender": "f"})
    response = api.post(
        "/v1/calibrate",
        {"user_id": "u2", "ai_recommendation": "deny", "user_decision": "deny", "model_id": "m1",
         "subgroups": {"gender": "m", "custom": {"site": "A"}}},
        format="json",
    )  # fmt: skip
    assert response.status_code == 200, response.content
    groups = gender_groups(api, model_id="m1")
    assert (groups["f"]["decisions"], groups["f"]["override_rate"]) == (1, 1.0)
    assert (groups["m"]["decisions"], groups["m"]["favorable_rate"]) == (1, 0.0)
    site = api.get("/v1/bias/subgroups", {"attribute": "custom.site"}).json()["attributes"]["custom.site"]
    assert site["groups"][0]["group"] == "A"


def test_detect_bias_after_post_log_replaces_the_logged_subgroups(api):
    log(
        api,
        decision_id="d-2",
        ai_recommendation="approve",
        user_decision="approve",
        subgroups={"gender": "f"},
    )
    api.post("/v1/detect-bias", {"decision_id": "d-2", "subgroups": {"gender": "m"}}, format="json")
    groups = gender_groups(api)
    assert list(groups) == ["m"] and groups["m"]["decisions"] == 1


def test_a_late_outcome_on_post_log_moves_the_accuracy_counts(api):
    # No confidence, so the outcome decides the category (docs/reference/calibration.md).
    log(api, decision_id="d-3", ai_recommendation="approve", user_decision="approve",
        subgroups={"gender": "f"})  # fmt: skip
    assert gender_groups(api)["f"]["accuracy"] is None
    response = api.post("/v1/log", {"decision_id": "d-3", "outcome": "deny"}, format="json")
    assert response.status_code == 201, response.content
    f = gender_groups(api)["f"]
    # without a confidence the outcome scores the decision but carries no stake
    assert (f["decisions"], f["accuracy"], f["overtrust_rate"]) == (1, 0.0, None)
    api.post("/v1/log", {"decision_id": "d-3", "outcome": "approve"}, format="json")
    f = gender_groups(api)["f"]
    # the AI was right now: accuracy moves, and still no stake on either side
    assert (f["decisions"], f["accuracy"], f["overtrust_rate"]) == (1, 1.0, None)
    assert f["undertrust_rate"] is None and not f["undertrust_effective_n"]


def test_a_late_outcome_after_reattachment_moves_the_reattached_groups(api):
    log(
        api,
        decision_id="d-4",
        ai_recommendation="approve",
        user_decision="approve",
        subgroups={"gender": "f"},
    )
    api.post("/v1/detect-bias", {"decision_id": "d-4", "subgroups": {"gender": "m"}}, format="json")
    api.post("/v1/log", {"decision_id": "d-4", "outcome": "approve"}, format="json")
    groups = gender_groups(api)
    assert list(groups) == ["m"]
    assert (groups["m"]["decisions"], groups["m"]["accuracy"]) == (1, 1.0)
