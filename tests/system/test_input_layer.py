"""Hostile input answers a 4xx problem document, never a 500, and stores nothing
(docs/reference/conventions.md; docs/reference/errors.md): extreme dates, NUL and unpaired surrogates, deep
JSON, `from` after `to`, mixed bounds."""

import json

import pytest

from audit.models import AuditEntry, Decision
from config.inputs import MAX_JSON_DEPTH
from fairness.models import FairnessSignal
from tests.conftest import assert_problem
from tests.fairness.helpers import SIGNALS, signal_body

DECISION = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "approve"}


def raw_post(api, path: str, text: str):
    return api.generic("POST", path, text.encode("utf-8"), content_type="application/json")


def assert_nothing_stored() -> None:
    assert Decision.objects.count() == 0 and AuditEntry.objects.count() == 0
    assert FairnessSignal.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "stamp",
    ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "10000-01-01T00:00:00Z", "0000-12-31"],
)
@pytest.mark.parametrize("path", ["/v1/log", "/v1/calibrate"])
def test_a_timestamp_whose_utc_conversion_leaves_years_1_to_9999_is_a_validation_error(api, path, stamp):
    assert_problem(api.post(path, {**DECISION, "timestamp": stamp}, format="json"), 400, "VALIDATION_ERROR")
    assert_nothing_stored()


@pytest.mark.django_db
@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z"])
@pytest.mark.parametrize("path", ["/v1/log", "/v1/calibrate"])
def test_a_timestamp_at_the_ends_of_the_calendar_is_never_a_server_error(api, path, stamp):
    response = api.post(path, {**DECISION, "timestamp": stamp}, format="json")
    assert response.status_code < 500, response.content


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "to=9999-12-31",
        "from=0001-01-01",
        "from=0001-01-01&to=9999-12-31",
        "to=9999-12-31T23:59:59.999999Z",
    ],
)
def test_audit_trail_bounds_at_the_ends_of_the_calendar_answer_200(api, query):
    assert api.get(f"/v1/audit-trail?{query}").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/v1/audit-trail?from=0001-01-01T00:00:00%2B01:00",
        "/v1/audit-trail?to=99999-01-01",
        "/v1/bias/feed?to=9999-12-31T23:59:59-05:00",
        "/v1/model-fairness-signals?endDate=0001-01-01T00:30:00%2B01:00",
        "/v1/bias/amplification?startDate=2026-02-30",
        "/v1/trust-score/trend?from=0000-01-01",
        "/v1/bias/subgroups?to=10000-01-01",
    ],
)
def test_an_unrepresentable_bound_is_a_validation_error(api, path):
    assert_problem(api.get(path), 400, "VALIDATION_ERROR")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {"to": "0001-01-01"},
        {"from": "0001-01-01", "to": "0001-01-01"},
        {"from": "9999-12-31"},
        {"to": "9999-12-31"},
    ],
)
def test_trust_score_windows_at_the_ends_of_the_calendar_answer_200(api, body):
    assert api.post("/v1/trust-score", body, format="json").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("interval", ["day", "week", "month"])
@pytest.mark.parametrize(
    "query",
    ["to=0001-01-01", "from=9999-12-01&to=9999-12-31", "from=0001-01-01&to=0001-03-01", "from=9999-12-31"],
)
def test_trend_windows_at_the_ends_of_the_calendar_answer_200(api, query, interval):
    assert api.get(f"/v1/trust-score/trend?{query}&interval={interval}").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/v1/audit-trail?from=2026-11-20&to=2026-11-19",
        "/v1/audit-trail?from=2026-11-19T12:00:01Z&to=2026-11-19T12:00:00Z",
        "/v1/bias/feed?from=2026-11-20&to=2026-11-19T23:59:59Z",
        "/v1/model-fairness-signals?startDate=2026-11-20&endDate=2026-11-19",
        "/v1/bias/amplification?startDate=2026-11-20&endDate=2026-11-19",
        "/v1/trust-score/trend?from=2026-11-20&to=2026-11-19",
        "/v1/bias/subgroups?from=2026-11-20&to=2026-11-19",
    ],
)
def test_from_after_to_is_a_validation_error(api, path):
    assert_problem(api.get(path), 400, "VALIDATION_ERROR")


@pytest.mark.django_db
def test_from_after_to_in_a_trust_score_body_is_a_validation_error(api):
    response = api.post("/v1/trust-score", {"from": "2026-11-20", "to": "2026-11-19"}, format="json")
    assert_problem(response, 400, "VALIDATION_ERROR")


@pytest.mark.django_db
def test_a_date_bound_mixed_with_a_timestamp_bound_selects_exactly_that_span(api):
    for hour in ("03", "11", "13", "21"):
        body = {**DECISION, "decision_id": f"d{hour}", "timestamp": f"2026-11-19T{hour}:00:00Z"}
        assert api.post("/v1/log", body, format="json").status_code == 201
    first_half = api.get("/v1/audit-trail?from=2026-11-19&to=2026-11-19T12:00:00Z").json()
    assert sorted(e["decision_id"] for e in first_half["data"]) == ["d03", "d11"]
    second_half = api.get("/v1/audit-trail?from=2026-11-19T12:00:00Z&to=2026-11-19").json()
    assert sorted(e["decision_id"] for e in second_half["data"]) == ["d13", "d21"]
    assert api.get("/v1/audit-trail?from=2026-11-19T12:00:00Z&to=2026-11-19T12:00:00Z").status_code == 200


LONE_SURROGATE = '"\\ud800"'
NUL = '"a\\u0000b"'


@pytest.mark.django_db
@pytest.mark.parametrize("bad", [LONE_SURROGATE, NUL, '"\\udfff tail"'])
@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/log", "user_id"),
        ("/v1/log", "context"),
        ("/v1/calibrate", "ai_recommendation"),
        ("/v1/calibrate", "user_decision"),
        (SIGNALS, "modelId"),
        (SIGNALS, "privilegedGroup"),
        (SIGNALS, "protectedAttribute"),
    ],
)
def test_nul_and_unpaired_surrogates_in_body_strings_are_refused(api, path, field, bad):
    base = signal_body() if path == SIGNALS else dict(DECISION)
    text = json.dumps({k: v for k, v in base.items() if k != field})
    text = text[:-1] + f', "{field}": {bad}}}'
    assert_problem(raw_post(api, path, text), 400, "VALIDATION_ERROR")
    assert_nothing_stored()


@pytest.mark.django_db
def test_surrogates_inside_nested_metadata_and_keys_are_refused(api):
    text = json.dumps(DECISION)[:-1] + ', "metadata": {"a": [1, {"\\ud83d": "x"}]}}'
    assert_problem(raw_post(api, "/v1/log", text), 400, "VALIDATION_ERROR")
    text = json.dumps(DECISION)[:-1] + ', "metadata": {"a": [1, {"b": "\\ud83d"}]}}'
    response = raw_post(api, "/v1/log", text)
    assert_problem(response, 400, "VALIDATION_ERROR")
    assert response.json()["errors"][0]["field"] == "metadata.a[1].b"
    assert_nothing_stored()


@pytest.mark.django_db
def test_a_paired_surrogate_escape_is_an_ordinary_character(api):
    text = json.dumps(DECISION)[:-1] + ', "context": "smile \\ud83d\\ude00"}'
    response = raw_post(api, "/v1/log", text)
    assert response.status_code == 201, response.content
    assert response.json()["context"] == "smile \U0001f600"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/v1/audit-trail?user_id=a%00b",
        "/v1/model-fairness-signals?modelId=a%00b",
        "/v1/bias/amplification?protectedAttribute=%00",
        "/v1/bias/feed?model_id=x%00",
        "/v1/trust-score/trend?user_id=%00",
        "/v1/webhooks?x%00=1",
        "/v1/audit-trail?from=2026-11-19%00",
    ],
)
def test_nul_in_a_query_parameter_is_refused(api, path):
    assert_problem(api.get(path), 400, "VALIDATION_ERROR")


@pytest.mark.django_db
@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 5000])
@pytest.mark.parametrize("path", ["/v1/log", "/v1/calibrate", SIGNALS, "/v1/webhooks", "/v1/log/batch"])
def test_json_nested_deeper_than_64_levels_is_invalid_json(api, path, depth):
    text = "[" * depth + "]" * depth
    assert_problem(raw_post(api, path, text), 400, "INVALID_JSON")
    nested = (
        json.dumps(DECISION)[:-1] + ', "metadata": ' + '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1) + "}"
    )
    assert_problem(raw_post(api, path, nested), 400, "INVALID_JSON")
    assert_nothing_stored()


@pytest.mark.django_db
def test_json_nested_exactly_64_levels_is_parsed(api):
    nested = json.dumps(DECISION)[:-1] + ', "metadata": ' + '{"a":' * 62 + "{}" + "}" * 62 + "}"
    response = raw_post(api, "/v1/log", nested)
    assert response.status_code == 201, response.content


@pytest.mark.django_db
def test_ndjson_lines_go_through_the_same_checks(api):
    line = json.dumps(DECISION)[:-1] + ', "context": "\\ud800"}'
    response = api.generic("POST", "/v1/log/batch", line.encode(), content_type="application/x-ndjson")
    assert response.status_code == 200
    assert response.json()["accepted"] == 0 and response.json()["rejected"] == 1
    assert response.json()["results"][0]["error"]["code"] == "VALIDATION_ERROR"
    assert_nothing_stored()


@pytest.mark.django_db
def test_a_signal_that_fails_after_the_hourly_limit_counted_it_does_not_use_it_up(api, monkeypatch):
    from fairness import services

    def broken(signal):
        raise RuntimeError("a bug after the limit was taken")

    monkeypatch.setattr(services, "_analyse_and_alert", broken)
    monkeypatch.setattr(services.signal_limiter, "limit", 2)
    for _ in range(3):
        assert api.post(SIGNALS, signal_body(), format="json").status_code == 500
    monkeypatch.undo()
    monkeypatch.setattr(services.signal_limiter, "limit", 2)
    assert [api.post(SIGNALS, signal_body(), format="json").status_code for _ in range(3)] == [201, 201, 429]
