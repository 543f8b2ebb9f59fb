"""GET /model-fairness-signals and /:id: filters, sorting, paging, tenancy."""

import pytest

from tests.fairness.helpers import SIGNALS, post_signal

pytestmark = pytest.mark.django_db


@pytest.fixture
def signals(api):
    made = [
        post_signal(api, modelId="m1", externalToolId="fairlearn", protectedAttribute="gender", passesThreshold=True,
                    metricValue=0.3, signalTimestamp="2026-11-19T10:00:00Z").json(),
        post_signal(api, modelId="m2", externalToolId="ibm_aif360", protectedAttribute="age_group",
                    passesThreshold=False, metricValue=0.1, signalTimestamp="2026-11-20T10:00:00Z").json(),
        post_signal(api, modelId="m1", externalToolId="custom", protectedAttribute="gender", passesThreshold=...,
                    metricValue=0.9, signalTimestamp="2026-11-18T10:00:00Z").json(),
    ]  # fmt: skip
    return {s["modelId"] + ":" + s["externalToolId"]: s for s in made}


@pytest.fixture(autouse=True)
def _fixed_clock():
    import datetime as dt

    import time_machine

    with time_machine.travel(dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC), tick=True):
        yield


def ids(response):
    assert response.status_code == 200, response.content
    return [s["modelId"] + ":" + s["externalToolId"] for s in response.json()["data"]]


def test_default_order_is_newest_signal_timestamp_first(api, signals):
    assert ids(api.get(SIGNALS)) == ["m2:ibm_aif360", "m1:fairlearn", "m1:custom"]


def test_list_envelope_is_camel_case(api, signals):
    body = api.get(SIGNALS, {"limit": 2}).json()
    assert body["pagination"] == {"page": 1, "limit": 2, "total": 3, "totalPages": 2, "hasMore": True}
    assert set(body["data"][0]) >= {"id", "customerId", "rawPayload", "analysis", "alertId"}


def test_page_past_the_end_is_empty(api, signals):
    body = api.get(SIGNALS, {"page": 5}).json()
    assert body["data"] == [] and body["pagination"]["total"] == 3


@pytest.mark.parametrize(("params", "expected"), [
    ({"modelId": "m1"}, ["m1:fairlearn", "m1:custom"]),
    ({"externalToolId": "ibm_aif360"}, ["m2:ibm_aif360"]),
    ({"protectedAttribute": "gender"}, ["m1:fairlearn", "m1:custom"]),
    ({"passesThreshold": "true"}, ["m1:fairlearn"]),
    ({"passesThreshold": "false"}, ["m2:ibm_aif360"]),
    ({"startDate": "2026-11-19"}, ["m2:ibm_aif360", "m1:fairlearn"]),
    ({"endDate": "2026-11-19"}, ["m1:fairlearn", "m1:custom"]),
    ({"startDate": "2026-11-19T10:00:00Z", "endDate": "2026-11-19T10:00:00.001Z"}, ["m1:fairlearn"]),
    ({"startDate": "2026-11-19", "endDate": "2026-11-19"}, ["m1:fairlearn"]),
    ({"modelId": "m1", "protectedAttribute": "age_group"}, []),
    ({"modelId": "nope"}, []),
])  # fmt: skip
def test_filters(api, signals, params, expected):
    assert ids(api.get(SIGNALS, params)) == expected


@pytest.mark.parametrize(("params", "expected"), [
    ({"sortBy": "signalTimestamp", "sortOrder": "asc"}, ["m1:custom", "m1:fairlearn", "m2:ibm_aif360"]),
    ({"sortBy": "metricValue"}, ["m1:custom", "m1:fairlearn", "m2:ibm_aif360"]),
    ({"sortBy": "metricValue", "sortOrder": "asc"}, ["m2:ibm_aif360", "m1:fairlearn", "m1:custom"]),
    ({"sortBy": "ingestedAt", "sortOrder": "asc"}, ["m1:fairlearn", "m2:ibm_aif360", "m1:custom"]),
    ({"sortBy": "ingestedAt"}, ["m1:custom", "m2:ibm_aif360", "m1:fairlearn"]),
    ({"sortBy": "modelId", "sortOrder": "desc"}, ["m2:ibm_aif360", "m1:custom", "m1:fairlearn"]),
])  # fmt: skip
def test_sorting(api, signals, params, expected):
    assert ids(api.get(SIGNALS, params)) == expected


@pytest.mark.parametrize("params", [
    {"passesThreshold": "yes"}, {"passesThreshold": "1"}, {"sortBy": "metric_value"}, {"sortBy": "id"},
    {"sortOrder": "up"}, {"startDate": "not-a-date"}, {"endDate": "2026-02-30"}, {"page": 0}, {"limit": 101},
    {"limit": "x"},
])  # fmt: skip
def test_bad_query_parameters_are_validation_errors(api, signals, params):
    response = api.get(SIGNALS, params)
    assert response.status_code == 400
    assert response.json()["code"] == "VALIDATION_ERROR"


def test_single_signal_read_is_the_full_signal(api, signals):
    created = signals["m1:fairlearn"]
    response = api.get(f"{SIGNALS}/{created['id']}")
    assert response.status_code == 200
    assert response.json() == created


def test_unknown_signal_is_404(api):
    response = api.get(f"{SIGNALS}/sig_nope")
    assert response.status_code == 404 and response.json()["code"] == "NOT_FOUND"


def test_other_customers_signals_are_invisible(api, other_api, signals):
    assert other_api.get(SIGNALS).json()["data"] == []
    response = other_api.get(f"{SIGNALS}/{signals['m1:fairlearn']['id']}")
    assert response.status_code == 404 and response.json()["code"] == "NOT_FOUND"


def test_list_query_count_does_not_grow_with_rows(api, signals, django_assert_max_num_queries):
    for _ in range(5):
        post_signal(api)
    with django_assert_max_num_queries(8):
        assert api.get(SIGNALS).status_code == 200
