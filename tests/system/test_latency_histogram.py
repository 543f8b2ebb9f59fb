"""/metrics' request latency is a Prometheus histogram per route template (bounded labels),
read back with prometheus_client's own parser; the JSON shape of docs/reference/system.md is unchanged."""

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.utils import floatToGoString

from config.metrics import BUCKETS_MS

pytestmark = pytest.mark.django_db

FAMILY = "trustcal_request_duration_seconds"
BOUNDS = [floatToGoString(bound / 1000.0) for bound in BUCKETS_MS] + ["+Inf"]


def _latency(api) -> dict[str, dict]:
    """Per route: {"buckets": {le: count}, "count": n, "sum": seconds} from the text exposition."""
    text = api.get("/v1/metrics", HTTP_ACCEPT="text/plain").content.decode()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert families[FAMILY].type == "histogram"
    routes: dict[str, dict] = {}
    for sample in families[FAMILY].samples:
        route = routes.setdefault(sample.labels["route"], {"buckets": {}})
        if sample.name.endswith("_bucket"):
            route["buckets"][sample.labels["le"]] = sample.value
        elif sample.name.endswith("_count"):
            route["count"] = sample.value
        elif sample.name.endswith("_sum"):
            route["sum"] = sample.value
    return routes


def test_every_bucket_appears_cumulative_for_a_route_from_its_first_request(api):
    api.get("/v1/engines/status")
    route = _latency(api)["/v1/engines/status"]
    assert list(route["buckets"]) == BOUNDS
    counts = list(route["buckets"].values())
    assert counts == sorted(counts)  # cumulative
    assert route["buckets"]["+Inf"] == route["count"] == 1
    assert route["sum"] > 0


def test_the_histogram_counts_move_with_each_request(api):
    api.get("/v1/engines/status")
    before = _latency(api)["/v1/engines/status"]
    for _ in range(3):
        api.get("/v1/engines/status")
    after = _latency(api)["/v1/engines/status"]
    assert after["count"] == before["count"] + 3
    assert after["buckets"]["+Inf"] == before["buckets"]["+Inf"] + 3
    assert after["sum"] > before["sum"]
    assert all(after["buckets"][le] >= before["buckets"][le] for le in BOUNDS)


def test_route_labels_are_templates_never_raw_paths(api):
    api.get("/v1/webhooks/whk_does_not_exist_1")
    api.get("/v1/webhooks/whk_does_not_exist_2")
    api.get("/v1/audit-trail?user_id=someone")
    api.get("/v1/nothing/here")
    routes = _latency(api)
    assert routes["/v1/webhooks/:pk"]["count"] == 2
    assert "unmatched" in routes
    assert not any("whk_does_not_exist" in route or "?" in route for route in routes)
    assert all(route == "unmatched" or route.startswith("/v1/") for route in routes)


def test_json_metrics_keep_the_c13_shape_next_to_the_histogram(api):
    api.get("/v1/engines/status")
    body = api.get("/v1/metrics").json()
    latency = body["requests"]["latency_ms"]["/v1/engines/status"]
    assert set(latency) == {"count", "p50", "p95", "p99"}
    assert latency["count"] == 1
    assert latency["p50"] in BUCKETS_MS
    assert set(body["requests"]["by_status"]) == {"2xx", "3xx", "4xx", "5xx"}
    for key in ("decisions_logged", "signals_ingested", "deliveries", "queues"):
        assert key in body


def test_a_request_slower_than_the_last_bound_keeps_every_percentile_finite(api, admin_api):
    """One request slower than 30 s lands in the open bucket: /metrics still answers 200 with
    finite percentiles (the mean of the slow requests), also after the process forgot its own
    counters (a restart: the figures then come from Redis, or start again without it)."""
    from config import metrics

    metrics.record_request("/v1/export", 202, 45_000.0)
    metrics.record_request("/v1/export", 202, 55_000.0)
    response = api.get("/v1/metrics")
    assert response.status_code == 200, response.content
    latency = response.json()["requests"]["latency_ms"]["/v1/export"]
    assert latency["p50"] == latency["p99"] == 50_000.0
    metrics.flush()
    with metrics._lock:
        metrics._local.clear()
        metrics._local_sums.clear()
    for client in (api, admin_api):
        again = client.get("/v1/metrics")
        assert again.status_code == 200
        for value in again.json()["requests"]["latency_ms"].get("/v1/export", {"p99": 0}).values():
            assert value is None or value < float("inf")
    assert api.get("/v1/metrics", HTTP_ACCEPT="text/plain").status_code == 200
