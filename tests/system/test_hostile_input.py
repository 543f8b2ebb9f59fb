"""Hostile input answers a 4xx problem document and stores nothing (docs/reference/conventions.md, Time
bounds and Strings; docs/reference/errors.md): dates at the edge of years 1..9999, NUL characters and
unpaired surrogates anywhere a string enters, JSON nested past 64 levels, `from` after `to`. Each case was
a 500 or a silent wrong answer."""

import json

import pytest

from audit.models import AuditEntry, Decision
from fairness.models import FairnessSignal

pytestmark = pytest.mark.django_db

DECISION = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "deny"}


def _post_raw(api, path: str, raw: str):
    return api.generic("POST", path, raw.encode("utf-8", "surrogatepass"), content_type="application/json")


def _assert_problem(response, status: int, code: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["code"] == code


def _nothing_stored() -> None:
    assert Decision.objects.count() == 0 and AuditEntry.objects.count() == 0
    assert FairnessSignal.objects.count() == 0


@pytest.mark.parametrize(
    "timestamp",
    ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "10000-01-01T00:00:00Z", "0000-12-31"],
)
@pytest.mark.parametrize("path", ["/v1/log", "/v1/calibrate"])
def test_a_timestamp_that_leaves_years_1_to_9999_in_utc_is_a_validation_error(api, path, timestamp):
    _assert_problem(
        api.post(path, {**DECISION, "timestamp": timestamp}, format="json"), 400, "VALIDATION_ERROR"
    )
    _nothing_stored()


@pytest.mark.parametrize(
    "path, raw",
    [
        ("/v1/log", '{"user_id": "\\ud800", "ai_recommendation": "a", "user_decision": "b"}'),
        (
            "/v1/log",
            '{"user_id": "u", "ai_recommendation": "a", "user_decision": "b", "context": "x\\udc00"}',
        ),
        (
            "/v1/log",
            '{"user_id": "u", "ai_recommendation": "a", "user_decision": "b", "metadata": {"\\ud83d": 1}}',
        ),
        ("/v1/calibrate", '{"user_id": "u", "ai_recommendation": "\\udfff", "user_decision": "b"}'),
        ("/v1/log", '{"user_id": "a\\u0000b", "ai_recommendation": "a", "user_decision": "b"}'),
        ("/v1/model-fairness-signals", '{"externalTool": "fairlearn", "modelId": "m\\u0000"}'),
        ("/v1/model-fairness-signals", '{"externalTool": "fairlearn", "modelId": "\\ud800"}'),
        ("/v1/detect-bias", '{"decision_id": "d1", "subgroups": {"gender": "\\ud800"}}'),
    ],
)
def test_nul_and_unpaired_surrogates_are_refused_in_any_body_string(api, path, raw):
    _assert_problem(_post_raw(api, path, raw), 400, "VALIDATION_ERROR")
    _nothing_stored()


def test_a_well_formed_surrogate_pair_is_an_ordinary_character(api):
    raw = '{"user_id": "u\\ud83d\\ude00", "ai_recommendation": "a", "user_decision": "b"}'
    assert _post_raw(api, "/v1/log", raw).status_code == 201
    assert Decision.objects.get().user_id == "u\U0001f600"


def _nested(levels: int) -> dict:
    inner: dict = {}
    for _ in range(levels - 1):
        inner = {"a": inner}
    return inner


@pytest.mark.parametrize("levels, accepted", [(64, True), (65, False)])
def test_json_nested_past_64_levels_is_invalid_json(api, levels, accepted):
    body = {**DECISION, "metadata": _nested(levels - 1)}  # the body object is the first level
    response = _post_raw(api, "/v1/log", json.dumps(body))
    if accepted:
        assert response.status_code == 201
    else:
        _assert_problem(response, 400, "INVALID_JSON")
        _nothing_stored()


@pytest.mark.parametrize("raw", ["[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000])
def test_json_nested_thousands_of_levels_is_invalid_json_not_a_recursion_error(api, raw):
    _assert_problem(_post_raw(api, "/v1/log", raw), 400, "INVALID_JSON")
    _nothing_stored()


@pytest.mark.parametrize(
    "query",
    [
        "/v1/audit-trail?user_id=a%00b",
        "/v1/audit-trail?a%00=1",
        "/v1/bias/feed?attribute=gender%00",
        "/v1/audit-trail?from=2026-11-20&to=2026-11-19",
        "/v1/audit-trail?from=2026-11-20T00:00:00Z&to=2026-11-19",
        "/v1/audit-trail?to=10000-01-01",
        "/v1/audit-trail?from=0001-01-01T00:00:00%2B01:00",
    ],
)
def test_bad_query_parameters_are_validation_errors(api, query):
    _assert_problem(api.get(query), 400, "VALIDATION_ERROR")


@pytest.mark.parametrize(
    "request_args",
    [
        ("get", "/v1/audit-trail?to=9999-12-31"),
        ("get", "/v1/audit-trail?from=0001-01-01"),
        ("post", "/v1/trust-score", {"to": "0001-01-01"}),
        ("post", "/v1/trust-score", {"from": "9999-12-01", "to": "9999-12-31"}),
        ("get", "/v1/trust-score/trend?from=9999-12-30&to=9999-12-31"),
        ("get", "/v1/trust-score/trend?from=9999-10-01&to=9999-12-31&interval=month"),
        ("get", "/v1/trust-score/trend?from=0001-01-01&to=0001-01-31&interval=week"),
    ],
)
def test_the_first_and_last_representable_days_are_answered(api, request_args):
    method, path, *body = request_args
    response = (
        getattr(api, method)(path, *(body or []), format="json") if body else getattr(api, method)(path)
    )
    assert response.status_code == 200, response.content[:300]


def test_a_date_bound_and_a_timestamp_bound_mix(api):
    for hour in ("06", "18"):
        body = {**DECISION, "timestamp": f"2026-11-19T{hour}:00:00Z"}
        assert api.post("/v1/log", body, format="json").status_code == 201
    first_half = api.get("/v1/audit-trail?from=2026-11-19&to=2026-11-19T12:00:00Z").json()
    assert [e["timestamp"] for e in first_half["data"]] == ["2026-11-19T06:00:00.000Z"]
    second_half = api.get("/v1/audit-trail?from=2026-11-19T12:00:00Z&to=2026-11-19").json()
    assert [e["timestamp"] for e in second_half["data"]] == ["2026-11-19T18:00:00.000Z"]
