"""POST /detect-bias and GET /bias/feed (docs/reference/bias.md), over HTTP."""

import pytest

from tests.bias.factories import Spec, rated_groups, seed
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def detect(api, decision_id, subgroups, status=200):
    response = api.post(
        "/v1/detect-bias", {"decision_id": decision_id, "subgroups": subgroups}, format="json"
    )
    assert response.status_code == status, response.content
    return response.json()


def finding(body, bias_type, attribute="gender"):
    matches = [f for f in body["findings"] if f["bias_type"] == bias_type and f["attribute"] == attribute]
    assert len(matches) == 1, body["findings"]
    return matches[0]


def test_favourable_rates_080_vs_040_give_high_disparate_impact_and_critical_outcome_disparity(api):
    decisions = seed("acme", rated_groups("gender", {"male": 0.8, "female": 0.4}, 100))
    body = detect(api, decisions[150].decision_id, {"gender": "female"})

    assert body["bias_detected"] is True
    assert body["severity"] == "critical"
    di = finding(body, "disparate_impact")
    assert di["group"] == "female" and di["reference_group"] == "male"
    assert di["value"] == 0.5 and di["severity"] == "high"
    assert di["group_rate"] == 0.4 and di["reference_rate"] == 0.8
    assert di["sample_sizes"] == {"group": 100, "reference_group": 100}
    od = finding(body, "outcome_disparity")
    assert od["value"] == 0.4 and od["severity"] == "critical"
    assert od["p_value"] < 0.05 and di["p_value"] < 0.05
    assert od["regulation"] == "EU AI Act Art. 10"
    assert body["alert_id"].startswith("bal_")
    assert body["decision_id"] == decisions[150].decision_id
    assert body["analyzed_at"].endswith("Z")

    feed = api.get("/v1/bias/feed").json()
    assert feed["pagination"]["total"] == 1
    alert = feed["data"][0]
    assert alert["alert_id"] == body["alert_id"]
    assert alert["severity"] == "critical" and alert["model_id"] == "credit-v1"
    assert "disparate_impact" in alert["bias_types"] and alert["attributes"] == ["gender"]
    assert alert["findings"] == body["findings"]
    assert api.get(f"/v1/bias/feed/{body['alert_id']}").json()["alert_id"] == body["alert_id"]

    events = list(Event.objects.filter(customer_id="acme", type="bias.detected"))
    assert len(events) == 1
    assert events[0].data["alert_id"] == body["alert_id"]
    assert events[0].data["regulation"] == "EU AI Act Art. 10"
    assert events[0].data["severity"] == "critical"


def test_p_value_is_the_pooled_two_sided_two_proportion_z_test(api):
    decisions = seed("acme", rated_groups("gender", {"male": 0.8, "female": 0.4}, 100))
    body = detect(api, decisions[0].decision_id, {"gender": "male"})
    # pooled p = 0.6, se = sqrt(0.6*0.4*(2/100)) = 0.069282, z = 5.7735 -> p = 7.76e-9
    assert finding(body, "outcome_disparity")["p_value"] == pytest.approx(7.7647e-9, rel=1e-3)


def test_balanced_dataset_detects_no_bias(api):
    decisions = seed("acme", rated_groups("gender", {"male": 0.6, "female": 0.6}, 100))
    body = detect(api, decisions[0].decision_id, {"gender": "male"})
    assert body == {**body, "bias_detected": False, "severity": "none", "findings": [], "alert_id": None}
    assert api.get("/v1/bias/feed").json()["data"] == []
    assert not Event.objects.filter(type="bias.detected").exists()


def test_groups_under_30_decisions_never_exceed_low(api):
    decisions = seed("acme", rated_groups("gender", {"male": 0.9, "female": 0.1}, 20))
    body = detect(api, decisions[0].decision_id, {"gender": "male"})
    assert body["bias_detected"] is True
    assert body["severity"] == "low"
    assert body["findings"] and all(f["severity"] == "low" for f in body["findings"])
    assert not Event.objects.filter(type="bias.detected").exists()


def test_medium_needs_a_q_value_under_005(api):
    # 0.57 vs 0.40 over 35 decisions each: d = 0.17 (medium by size) but p = 0.15, q >= p -> low.
    decisions = seed("acme", rated_groups("gender", {"a": 20 / 35, "b": 14 / 35}, 35))
    body = detect(api, decisions[0].decision_id, {"gender": "a"})
    # Not established (q >= 0.05): a comparison, not a finding; no bias detected, no alert.
    assert body["findings"] == [] and body["bias_detected"] is False and body["alert_id"] is None
    od = next(f for f in body["comparisons"] if f["bias_type"] == "outcome_disparity" and f["group"] == "b")
    assert od["p_value"] > 0.05 and od["q_value"] >= od["p_value"]
    assert od["severity"] == "low" and od["finding"] is False


def test_a_gap_of_noise_is_a_comparison_and_stores_no_alert(api):
    # 0.60 against 0.55 over 100 decisions each: a gap of 0.05 (low by size), p = 0.47.
    decisions = seed("acme", rated_groups("gender", {"m": 0.6, "f": 0.55}, 100))
    body = detect(api, decisions[0].decision_id, {"gender": "m"})
    assert body["bias_detected"] is False and body["severity"] == "none" and body["findings"] == []
    gap = [f for f in body["comparisons"] if f["bias_type"] == "outcome_disparity"]
    assert gap and gap[0]["value"] == 0.05 and gap[0]["finding"] is False
    assert api.get("/v1/bias/feed").json()["data"] == []


def test_every_group_is_compared_with_the_advantaged_group(api):
    specs = rated_groups("ethnicity", {"a": 0.8, "b": 0.5, "c": 0.3}, 100)
    decisions = seed("acme", specs)
    body = detect(api, decisions[0].decision_id, {"ethnicity": "a"})
    od = {f["group"]: f for f in body["findings"] if f["bias_type"] == "outcome_disparity"}
    assert set(od) == {"b", "c"}
    assert {f["reference_group"] for f in od.values()} == {"a"}
    assert od["b"]["value"] == 0.3 and od["b"]["severity"] == "critical"
    assert od["c"]["value"] == 0.5


def test_override_and_accuracy_disparities_name_the_group_with_the_higher_rate(api):
    specs = []
    for i in range(100):
        # group x: humans override the AI 40% of the time and are wrong then; group y never.
        overrides = i < 40
        specs.append(
            Spec(
                ai="approve",
                human="deny" if overrides else "approve",
                outcome="approve",
                subgroups={"gender": "x"},
            )
        )
        specs.append(Spec(ai="approve", human="approve", outcome="approve", subgroups={"gender": "y"}))
    decisions = seed("acme", specs)
    body = detect(api, decisions[0].decision_id, {"gender": "x"})
    override = finding(body, "override_disparity")
    assert (override["group"], override["reference_group"], override["value"]) == ("x", "y", 0.4)
    accuracy = finding(body, "accuracy_disparity")
    assert (accuracy["group"], accuracy["reference_group"], accuracy["value"]) == ("x", "y", 0.4)
    assert accuracy["severity"] == "critical"


def test_detection_is_scoped_to_the_decisions_model_and_the_last_30_days(api):
    import datetime as dt

    from django.utils import timezone

    old = timezone.now() - dt.timedelta(days=45)
    seed("acme", rated_groups("gender", {"m": 0.9, "f": 0.1}, 100, timestamp=old))
    seed("acme", rated_groups("gender", {"m": 0.9, "f": 0.1}, 100, model_id="other-model"))
    decisions = seed("acme", rated_groups("gender", {"m": 0.5, "f": 0.5}, 50))
    body = detect(api, decisions[0].decision_id, {"gender": "m"})
    assert body["bias_detected"] is False


def test_subgroups_posted_before_the_decision_count_once_it_arrives(api):
    seed("acme", rated_groups("gender", {"m": 0.8}, 100))
    body = detect(api, "late-1", {"gender": "f"})  # no such decision yet: pending
    assert body["bias_detected"] is False
    seed(
        "acme",
        [Spec(ai="deny", human="deny", decision_id="late-1")]
        + [Spec(ai="deny", human="deny", subgroups={"gender": "f"}) for _ in range(59)],
    )
    report = api.get("/v1/bias/subgroups", {"attribute": "gender"}).json()
    groups = {g["group"]: g for g in report["attributes"]["gender"]["groups"]}
    assert groups["f"]["decisions"] == 60
    assert groups["f"]["favorable_rate"] == 0.0


def test_reattaching_subgroups_replaces_and_moves_the_counts(api):
    decisions = seed(
        "acme", [Spec(ai="approve", human="approve", subgroups={"gender": "f", "age_group": "18-25"})]
    )
    detect(api, decisions[0].decision_id, {"gender": "m"})
    report = api.get("/v1/bias/subgroups").json()["attributes"]
    assert list(report) == ["gender"]
    assert [(g["group"], g["decisions"]) for g in report["gender"]["groups"]] == [("m", 1)]


def test_custom_attributes_are_named_custom_dot_key(api):
    decisions = seed("acme", [Spec(ai="approve", human="approve")])
    detect(api, decisions[0].decision_id, {"custom": {"region": "north"}})
    report = api.get("/v1/bias/subgroups", {"attribute": "custom.region"}).json()
    assert report["attributes"]["custom.region"]["groups"][0]["group"] == "north"


def test_per_model_favourable_values_replace_the_default_list(api):
    from bias.models import ModelFavorableValues

    specs = [
        Spec(ai=v, human=v, subgroups={"gender": g})
        for g, v in [("m", " Low-Risk ")] * 80
        + [("m", "high-risk")] * 20
        + [("f", "low-risk")] * 40
        + [("f", "HIGH-risk")] * 60
    ]
    decisions = seed("acme", specs)
    assert detect(api, decisions[0].decision_id, {"gender": "m"})["bias_detected"] is False
    ModelFavorableValues.objects.create(customer_id="acme", model_id="credit-v1", values=["low-risk"])
    body = detect(api, decisions[0].decision_id, {"gender": "m"})
    assert finding(body, "disparate_impact")["value"] == 0.5


def test_validation_errors_are_problem_documents(api):
    cases = [
        {"decision_id": "d1"},
        {"decision_id": "d1", "subgroups": {}},
        {"decision_id": "d1", "subgroups": {"gender": 3}},
        {"decision_id": "d1", "subgroups": {"race": "x"}},
        {"decision_id": "d1", "subgroups": {"custom": ["x"]}},
        {"decision_id": "d1", "subgroups": {"gender": "  "}},
        {"decision_id": "bad id!", "subgroups": {"gender": "f"}},
        {"subgroups": {"gender": "f"}},
        [],
    ]
    for body in cases:
        response = api.post("/v1/detect-bias", body, format="json")
        assert response.status_code == 400, body
        assert response.json()["code"] == "VALIDATION_ERROR"
        assert response["Content-Type"] == "application/problem+json"


def test_feed_filters_and_paging(api):
    decisions = seed("acme", rated_groups("gender", {"m": 0.8, "f": 0.4}, 100))
    # A gap of 0.08 (low by size), established at 400 decisions a group (p = 0.001).
    seed("acme", rated_groups("age_group", {"young": 0.9, "old": 0.82}, 400, model_id="m2"))
    first = detect(api, decisions[0].decision_id, {"gender": "m"})
    second = detect(api, "x-1", {"age_group": "old"})  # not logged: all models
    assert second["severity"] == "low"

    def ids(**params):
        return [a["alert_id"] for a in api.get("/v1/bias/feed", params).json()["data"]]

    assert ids() == [second["alert_id"], first["alert_id"]]
    assert ids(severity="critical") == [first["alert_id"]]
    assert ids(attribute="age_group") == [second["alert_id"]]
    assert ids(bias_type="disparate_impact") == [first["alert_id"]]
    assert ids(bias_type="disparate_impact", attribute="age_group") == []
    assert ids(model_id="credit-v1") == [first["alert_id"]]
    assert ids(**{"from": "2000-01-01", "to": "2100-01-01"}) == [second["alert_id"], first["alert_id"]]
    assert ids(to="2000-01-01") == []
    page = api.get("/v1/bias/feed", {"limit": 1, "page": 2}).json()
    assert [a["alert_id"] for a in page["data"]] == [first["alert_id"]]
    assert page["pagination"] == {"page": 2, "limit": 1, "total": 2, "total_pages": 2, "has_more": False}
    for params in (
        {"severity": "none"},
        {"bias_type": "x"},
        {"attribute": "race"},
        {"from": "yesterday"},
        {"limit": 0},
    ):
        response = api.get("/v1/bias/feed", params)
        assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR", params


def test_alerts_are_invisible_to_other_customers(api, other_api):
    decisions = seed("acme", rated_groups("gender", {"m": 0.8, "f": 0.4}, 100))
    alert_id = detect(api, decisions[0].decision_id, {"gender": "m"})["alert_id"]
    assert other_api.get("/v1/bias/feed").json()["data"] == []
    assert other_api.get(f"/v1/bias/feed/{alert_id}").status_code == 404
    assert other_api.get("/v1/bias/subgroups").json()["attributes"] == {}
    # The other customer's decision_id namespace is its own: attaching there is pending.
    assert detect(other_api, decisions[0].decision_id, {"gender": "m"})["bias_detected"] is False


def test_bias_detection_engine_is_listed(api):
    engines = api.get("/v1/engines/status").json()["engines"]
    bias = [e for e in engines if e["name"] == "bias_detection"]
    assert bias and bias[0]["status"] == "operational"


def test_feed_query_count_does_not_grow_with_alerts(api, django_assert_max_num_queries):
    decisions = seed("acme", rated_groups("gender", {"m": 0.8, "f": 0.4}, 40))
    for decision in decisions[:12]:
        detect(api, decision.decision_id, {"gender": "m"})
    with django_assert_max_num_queries(4):
        assert len(api.get("/v1/bias/feed", {"bias_type": "outcome_disparity"}).json()["data"]) == 12


def test_admin_lists_bias_alerts_and_edits_favourable_values(client, admin_user, api):
    from bias.models import ModelFavorableValues

    decisions = seed("acme", rated_groups("gender", {"m": 0.8, "f": 0.4}, 40))
    detect(api, decisions[0].decision_id, {"gender": "m"})
    client.force_login(admin_user)
    page = client.get("/admin/bias/biasalert/", {"severity": "critical", "bias_type": "disparate_impact"})
    assert page.status_code == 200 and b"bal_" in page.content
    response = client.post(
        "/admin/bias/modelfavorablevalues/add/",
        {"customer": "acme", "model_id": "credit-v1", "values": '[" Low-Risk ", "ok"]'},
    )
    assert response.status_code == 302, response.content[:2000]
    assert ModelFavorableValues.objects.get(model_id="credit-v1").values == ["low-risk", "ok"]


def test_posting_the_same_subgroups_twice_counts_the_decision_once(api):
    decisions = seed("acme", [Spec(ai="approve", human="approve")])
    for _ in range(2):
        detect(api, decisions[0].decision_id, {"gender": "f"})
    groups = api.get("/v1/bias/subgroups").json()["attributes"]["gender"]["groups"]
    assert [(g["group"], g["decisions"]) for g in groups] == [("f", 1)]
