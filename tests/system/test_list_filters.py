"""List filters are FilterSets over the one input layer (docs/reference/conventions.md, Strings,
Time bounds): a bad filter value answers the same VALIDATION_ERROR problem document as every
other input, naming the parameter, and /v1/schema lists every filter parameter with its type,
enumeration and a description."""

import pytest
from django.test import Client

from tests.conftest import assert_problem

# path -> {parameter: enumeration or None (free text or bound)}
LIST_FILTERS: dict[str, dict[str, list[str] | None]] = {
    "/v1/audit-trail": {
        "user_id": None,
        "model_id": None,
        "decision_id": None,
        "calibration": ["CALIBRATED", "OVERTRUSTING", "UNDERTRUSTING", "UNSCORED"],
        "probe": ["false", "true"],
        "from": None,
        "to": None,
    },
    "/v1/bias/feed": {
        "severity": ["critical", "high", "low", "medium"],
        "attribute": None,
        "bias_type": [
            "accuracy_disparity",
            "disparate_impact",
            "outcome_disparity",
            "override_disparity",
            "recommendation_disparity",
        ],
        "model_id": None,
        "from": None,
        "to": None,
    },
    "/v1/model-fairness-signals": {
        "modelId": None,
        "externalToolId": None,
        "protectedAttribute": None,
        "passesThreshold": ["false", "true"],
        "startDate": None,
        "endDate": None,
        "sortBy": ["ingestedAt", "metricValue", "modelId", "signalTimestamp"],
        "sortOrder": ["asc", "desc"],
    },
    "/v1/bias/amplification": {
        "status": ["acknowledged", "false_positive", "open", "resolved"],
        "severity": ["critical", "high", "low", "medium"],
        "protectedAttribute": None,
        "startDate": None,
        "endDate": None,
    },
    "/v1/webhooks/{id}/deliveries": {
        "status": ["failed", "pending", "skipped", "succeeded"],
        "event_type": ...,
    },
    "/v1/admin/api-keys": {
        "customer_id": None,
        "tier": ["enterprise", "growth", "pilot"],
        "status": ["active", "expired", "revoked", "rotated"],
    },
    "/v1/oversight/review-effort": {"from": None, "to": None, "model_id": None, "user_id": None},
    "/v1/oversight/vigilance": {"from": None, "to": None, "model_id": None, "user_id": None},
}
ADMIN_PATHS = {"/v1/admin/api-keys"}
PAGED_INSIDE = {"/v1/oversight/review-effort", "/v1/oversight/vigilance"}  # page/limit in the answer

# (path, query, the parameter the error names, a piece of its message)
BAD_VALUES = [
    ("/v1/audit-trail", "calibration=SOMETIMES", "calibration", "must be one of: CALIBRATED"),
    ("/v1/audit-trail", "probe=yes", "probe", "must be one of: true, false"),
    ("/v1/audit-trail", "user_id=" + "u" * 257, "user_id", "at most 256 characters"),
    ("/v1/audit-trail", "from=2026-13-01", "from", "must be a date (YYYY-MM-DD)"),
    ("/v1/audit-trail", "to=10000-01-01", "to", "years 1..9999"),
    ("/v1/audit-trail", "from=2026-11-20&to=2026-11-19", "from", "must not be after to"),
    ("/v1/bias/feed", "severity=none", "severity", "must be one of: low"),
    ("/v1/bias/feed", "attribute=race", "attribute", "gender, age_group, ethnicity or custom.<key>"),
    ("/v1/bias/feed", "bias_type=unfair", "bias_type", "must be one of"),
    ("/v1/bias/feed", "to=2026-11-19T12:00:00Z&from=2026-11-19T12:00:01Z", "from", "must not be after to"),
    ("/v1/model-fairness-signals", "passesThreshold=1", "passesThreshold", "must be one of: true, false"),
    ("/v1/model-fairness-signals", "sortBy=metric_value", "sortBy", "must be one of"),
    ("/v1/model-fairness-signals", "sortOrder=up", "sortOrder", "must be one of: asc, desc"),
    (
        "/v1/model-fairness-signals",
        "startDate=2026-11-20&endDate=2026-11-19",
        "startDate",
        "must not be after endDate",
    ),
    ("/v1/model-fairness-signals", "endDate=yesterday", "endDate", "must be a date"),
    ("/v1/bias/amplification", "status=closed", "status", "must be one of: open"),
    ("/v1/bias/amplification", "protectedAttribute=" + "a" * 257, "protectedAttribute", "at most 256"),
    ("/v1/admin/api-keys", "status=lost", "status", "must be one of: active, rotated, revoked, expired"),
    ("/v1/admin/api-keys", "tier=free", "tier", "must be one of"),
    ("/v1/admin/api-keys", "customer_id=" + "c" * 129, "customer_id", "at most 128 characters"),
    ("/v1/oversight/review-effort", "from=2026-11-20&to=2026-11-19", "from", "must not be after to"),
    ("/v1/oversight/vigilance", "user_id=" + "u" * 257, "user_id", "at most 256"),
    ("/v1/oversight/vigilance", "to=0000-12-31", "to", "years 1..9999"),
]


@pytest.fixture(scope="module")
def schema_paths(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return Client().get("/v1/schema", {"format": "json"}).json()["paths"]


def _query_parameters(schema_paths: dict, path: str) -> dict[str, dict]:
    operation = schema_paths[path]["get"]
    return {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "query", "field", "message"), BAD_VALUES)
def test_a_bad_filter_value_answers_the_validation_problem_naming_the_parameter(
    api, admin_api, path, query, field, message
):
    client = admin_api if path in ADMIN_PATHS else api
    body = assert_problem(client.get(f"{path}?{query}"), 400, "VALIDATION_ERROR")
    assert body["errors"][0]["field"] == field
    assert message in body["errors"][0]["message"]
    assert body["detail"] == f"{field}: {body['errors'][0]['message']}."


@pytest.mark.django_db
def test_every_bad_filter_value_of_a_request_is_listed(api):
    body = assert_problem(api.get("/v1/audit-trail?calibration=x&probe=y"), 400, "VALIDATION_ERROR")
    assert [e["field"] for e in body["errors"]] == ["calibration", "probe"]


@pytest.mark.django_db
def test_an_empty_filter_value_is_absent(api):
    assert api.get("/v1/audit-trail?calibration=&probe=&from=&user_id=").status_code == 200


@pytest.mark.django_db
def test_a_retrieve_reads_no_list_parameter(api):
    """The filterset applies to the list only: an object's page ignores list parameters."""
    api.post("/v1/log", {"user_id": "u1", "ai_recommendation": "a", "user_decision": "a"}, format="json")
    entry_id = api.get("/v1/audit-trail").json()["data"][0]["entry_id"]
    assert api.get(f"/v1/audit-trail/{entry_id}?calibration=SOMETIMES").status_code == 200


@pytest.mark.parametrize("path", sorted(LIST_FILTERS))
def test_the_schema_documents_every_filter_parameter(schema_paths, path):
    documented = _query_parameters(schema_paths, path)
    for name, enum in LIST_FILTERS[path].items():
        assert name in documented, f"{path} does not document {name}"
        parameter = documented[name]
        assert parameter["schema"]["type"] == "string"
        if enum is not ...:
            assert sorted(parameter["schema"].get("enum", [])) == sorted(enum or [])
        assert parameter.get("description"), f"{path} {name} has no description"
    if path not in PAGED_INSIDE:
        assert {"page", "limit"} <= set(documented)


@pytest.mark.django_db
def test_a_webhooks_deliveries_answer_the_validation_problem_for_a_bad_filter(api, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    created = api.post(
        "/v1/webhooks", {"url": "http://127.0.0.1:9/hook", "events": ["bias.detected"]}, format="json"
    )
    webhook_id = created.json()["webhook_id"]
    assert api.get(f"/v1/webhooks/{webhook_id}/deliveries?status=pending").status_code == 200
    body = assert_problem(
        api.get(f"/v1/webhooks/{webhook_id}/deliveries?status=lost"), 400, "VALIDATION_ERROR"
    )
    assert body["errors"] == [
        {"field": "status", "message": "must be one of: pending, succeeded, failed, skipped"}
    ]


@pytest.mark.django_db
def test_a_filter_narrows_only_the_callers_rows(api, other_api):
    """The filterset narrows the tenant-filtered rows: another customer's matching rows never show."""
    decision = {"user_id": "u1", "model_id": "m1", "ai_recommendation": "a", "user_decision": "a"}
    other_api.post("/v1/log", {**decision, "decision_id": "theirs"}, format="json")
    api.post("/v1/log", {**decision, "decision_id": "ours"}, format="json")
    data = api.get("/v1/audit-trail?user_id=u1&model_id=m1").json()["data"]
    assert [entry["decision_id"] for entry in data] == ["ours"]
    assert api.get("/v1/audit-trail?decision_id=theirs").json()["data"] == []
