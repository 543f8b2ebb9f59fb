"""POST /model-fairness-signals: every rule of docs/reference/fairness.md, Ingestion checks in order,
over HTTP."""

import datetime as dt
import json

import pytest
import time_machine

from tests.conftest import assert_problem
from tests.fairness.helpers import SIGNALS, now_iso, post_signal, signal_body
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def test_valid_signal_is_stored_and_returned_with_every_input_field(api):
    body = signal_body()
    response = api.post(SIGNALS, body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    for key, value in body.items():
        if key != "signalTimestamp":
            assert data[key] == value, key
    assert data["signalTimestamp"].endswith("Z")
    assert data["id"].startswith("sig_")
    assert data["customerId"] == "acme"
    assert data["ingestedAt"].endswith("Z")
    assert data["alertId"] is None
    assert data["analysis"]["status"] in ("completed", "insufficient_data")
    assert data["analysis"]["modelDisparityReported"] == 0.2


def test_optional_fields_may_be_absent_and_read_back_as_null(api):
    response = post_signal(
        api, externalToolVersion=..., modelVersion=..., threshold=..., passesThreshold=..., privilegedGroup=...,
        unprivilegedGroup=..., sampleSize=..., confidenceInterval=...,
    )  # fmt: skip
    assert response.status_code == 201, response.content
    data = response.json()
    for key in ("externalToolVersion", "modelVersion", "threshold", "passesThreshold", "privilegedGroup",
                "unprivilegedGroup", "sampleSize", "confidenceInterval"):  # fmt: skip
        assert data[key] is None


def test_accepted_signal_fires_model_bias_ingested(api):
    sig = post_signal(api).json()
    event = Event.objects.get(type="model.bias.ingested")
    assert event.customer_id == "acme"
    assert event.data["signalId"] == sig["id"]
    assert event.data["modelId"] == "credit-v3"


def test_rejected_signal_fires_no_event(api):
    post_signal(api, metricValue=2)
    assert not Event.objects.exists()


@pytest.mark.parametrize("tool", ["acme", "", "FAIRLEARN", 5, None, ...])
def test_unknown_or_missing_tool_is_invalid_source(api, tool):
    body = assert_problem(post_signal(api, externalToolId=tool), 400, "FAIRNESS_INVALID_SOURCE")
    assert body["errors"][0]["field"] == "externalToolId"


@pytest.mark.parametrize("metric", ["shap_values", "feature_attributions", "", 3, None, ...])
def test_unknown_or_missing_metric_is_invalid_metric(api, metric):
    assert_problem(post_signal(api, metricName=metric), 400, "FAIRNESS_INVALID_METRIC")


@pytest.mark.parametrize(
    "metric",
    ["demographic_parity", "equalized_odds", "equal_opportunity", "disparate_impact", "statistical_parity_difference",
     "consistency", "flip_rate", "calibration_error", "predictive_parity", "custom"],
)  # fmt: skip
def test_every_listed_metric_is_accepted_from_any_tool(api, metric):
    assert post_signal(api, metricName=metric, externalToolId="ibm_aif360").status_code == 201


def test_custom_tool_accepts_any_listed_metric(api):
    assert post_signal(api, externalToolId="custom", metricName="flip_rate").status_code == 201


def test_bad_tool_is_reported_before_bad_metric(api):
    assert_problem(post_signal(api, externalToolId="acme", metricName="nope"), 400, "FAIRNESS_INVALID_SOURCE")


def test_bad_tool_is_reported_before_everything_else(api):
    response = api.post(
        SIGNALS, {"externalToolId": "acme", "metricValue": 5, "signalTimestamp": "x"}, format="json"
    )
    assert_problem(response, 400, "FAIRNESS_INVALID_SOURCE")


def test_bad_metric_is_reported_before_other_fields(api):
    response = post_signal(api, metricName="nope", metricValue=5, modelId=..., rawPayload="x")
    assert_problem(response, 400, "FAIRNESS_INVALID_METRIC")


def test_other_fields_are_reported_before_the_timestamp_rules(api):
    response = post_signal(api, metricValue=1.5, signalTimestamp=now_iso(days=-200))
    assert_problem(response, 400, "VALIDATION_ERROR")


def test_metric_value_above_one_is_rejected(api):
    body = assert_problem(post_signal(api, metricValue=1.01), 400, "VALIDATION_ERROR")
    assert body["errors"] == [{"field": "metricValue", "message": "must be between 0 and 1"}]


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5])
def test_metric_value_bounds_are_inclusive(api, value):
    assert post_signal(api, metricValue=value).status_code == 201


@pytest.mark.parametrize("value", [-0.01, "0.5", True, None, ...])
def test_metric_value_must_be_a_number_in_range(api, value):
    assert_problem(post_signal(api, metricValue=value), 400, "VALIDATION_ERROR")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("modelId", ...), ("modelId", None), ("modelId", ""), ("modelId", 12), ("modelId", "x" * 256),
        ("protectedAttribute", ...), ("protectedAttribute", None), ("protectedAttribute", ["gender"]),
        ("rawPayload", ...), ("rawPayload", None), ("rawPayload", "text"), ("rawPayload", [1, 2]),
        ("signalTimestamp", ...), ("signalTimestamp", None), ("signalTimestamp", "yesterday"),
        ("signalTimestamp", 1700000000), ("signalTimestamp", "2026-13-45T99:00:00Z"),
        ("externalToolVersion", 1), ("modelVersion", {"v": 1}), ("threshold", "0.1"), ("threshold", False),
        ("passesThreshold", "true"), ("passesThreshold", 1), ("privilegedGroup", 1), ("unprivilegedGroup", []),
        ("sampleSize", -1), ("sampleSize", 1.5), ("sampleSize", "100"), ("sampleSize", True),
        ("sampleSize", 10**30), ("threshold", 10**400),
        ("confidenceInterval", {"lower": 0.3, "upper": 0.2}), ("confidenceInterval", {"lower": 0.1}),
        ("confidenceInterval", {"lower": "0.1", "upper": 0.2}), ("confidenceInterval", [0.1, 0.2]),
        ("confidenceInterval", "0.1-0.2"),
    ],
)  # fmt: skip
def test_malformed_fields_are_validation_errors(api, field, value):
    body = assert_problem(post_signal(api, **{field: value}), 400, "VALIDATION_ERROR")
    assert body["errors"][0]["field"].startswith(field)


def test_every_field_problem_is_listed(api):
    body = assert_problem(
        post_signal(api, modelId=..., metricValue=3, sampleSize=-2), 400, "VALIDATION_ERROR"
    )
    assert {e["field"] for e in body["errors"]} == {"modelId", "metricValue", "sampleSize"}


def test_equal_lower_and_upper_confidence_bounds_are_accepted(api):
    response = post_signal(api, confidenceInterval={"lower": 0.2, "upper": 0.2})
    assert response.json()["confidenceInterval"] == {"lower": 0.2, "upper": 0.2}


def test_same_privileged_and_unprivileged_group_is_rejected(api):
    assert_problem(post_signal(api, privilegedGroup="x", unprivilegedGroup="x"), 400, "VALIDATION_ERROR")


def test_body_must_be_a_json_object(api):
    assert_problem(api.post(SIGNALS, [signal_body()], format="json"), 400, "VALIDATION_ERROR")


def test_invalid_json_is_rejected(api):
    response = api.generic("POST", SIGNALS, "{not json", content_type="application/json")
    assert_problem(response, 400, "INVALID_JSON")


def test_timestamp_more_than_five_minutes_ahead_is_in_future(api):
    assert_problem(post_signal(api, signalTimestamp=now_iso(minutes=6)), 400, "SIGNAL_IN_FUTURE")


def test_timestamp_slightly_ahead_within_clock_skew_is_accepted(api):
    assert post_signal(api, signalTimestamp=now_iso(minutes=4)).status_code == 201


def test_signal_91_days_old_is_too_old(api):
    assert_problem(post_signal(api, signalTimestamp=now_iso(days=-91)), 400, "SIGNAL_TOO_OLD")


def test_signal_89_days_old_is_accepted(api):
    assert post_signal(api, signalTimestamp=now_iso(days=-89)).status_code == 201


def test_timestamp_with_offset_and_naive_timestamp_are_normalised_to_utc(api):
    with time_machine.travel(dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC), tick=True):
        offset = post_signal(api, signalTimestamp="2026-11-21T13:00:00+02:00").json()
        naive = post_signal(api, signalTimestamp="2026-11-21T10:30:00").json()
    assert offset["signalTimestamp"] == "2026-11-21T11:00:00.000Z"
    assert naive["signalTimestamp"] == "2026-11-21T10:30:00.000Z"


def test_future_check_comes_before_the_hourly_limit(api):
    for _ in range(100):
        assert post_signal(api).status_code == 201
    assert_problem(post_signal(api, signalTimestamp=now_iso(days=1)), 400, "SIGNAL_IN_FUTURE")


def test_the_101st_signal_in_an_hour_is_rate_limited(api):
    for _ in range(100):
        assert post_signal(api).status_code == 201
    response = post_signal(api)
    assert_problem(response, 429, "FAIRNESS_RATE_LIMIT")
    assert int(response["Retry-After"]) >= 1


def test_rejected_signals_do_not_count_towards_the_hourly_limit(api):
    for _ in range(30):
        post_signal(api, metricValue=7)
        post_signal(api, externalToolId="nope")
    for _ in range(100):
        assert post_signal(api).status_code == 201


def test_hourly_limit_slides_and_is_per_customer(api, other_api):
    start = dt.datetime.now(dt.UTC)
    with time_machine.travel(start, tick=False) as traveller:
        for _ in range(100):
            assert post_signal(api, signalTimestamp=now_iso(minutes=-1)).status_code == 201
        limited = post_signal(api, signalTimestamp=now_iso(minutes=-1))
        assert limited.status_code == 429
        assert 3590 <= int(limited["Retry-After"]) <= 3600
        assert post_signal(other_api, signalTimestamp=now_iso(minutes=-1)).status_code == 201
        traveller.shift(dt.timedelta(minutes=59))
        assert post_signal(api, signalTimestamp=now_iso(minutes=-1)).status_code == 429
        traveller.shift(dt.timedelta(minutes=1, seconds=1))
        assert post_signal(api, signalTimestamp=now_iso(minutes=-1)).status_code == 201


def test_raw_payload_round_trips_exactly(api):
    raw = {
        "z_last_key_first": 1,
        "a": [1, 2.5, -3e-7, None, True, "ü", {"nested": {"deep": [[]]}}],
        "big": 12345678901234567890,
        "float": 0.1 + 0.2,
        "unicode": "Z\u00fcrich \u2013 東京",
        "empty": {},
    }
    response = post_signal(api, rawPayload=raw)
    assert response.status_code == 201
    fetched = api.get(f"{SIGNALS}/{response.json()['id']}")
    text = fetched.content.decode()
    assert fetched.json()["rawPayload"] == raw
    assert json.dumps(fetched.json()["rawPayload"]) == json.dumps(raw)  # key order kept too
    assert "z_last_key_first" in text


def test_a_trailing_slash_reaches_the_same_handler(api):
    assert api.post(SIGNALS + "/", signal_body(), format="json").status_code == 201


def test_signals_need_a_key(anon_api):
    assert_problem(anon_api.post(SIGNALS, signal_body(), format="json"), 401, "AUTHENTICATION_REQUIRED")


@pytest.mark.redis
def test_hourly_limit_is_shared_through_redis_across_processes(api):
    from config.ratelimit import SlidingWindow
    from fairness import services

    for _ in range(100):
        assert post_signal(api).status_code == 201
    # A limiter built afresh (as in another web process) sees the same window in Redis.
    elsewhere = SlidingWindow(services.signal_limiter.namespace, limit=100, window_seconds=3600)
    decision = elsewhere.hit("acme")
    assert not decision.allowed and decision.count == 100
