"""The Prometheus text exposition of /metrics, rendered by prometheus_client from one
snapshot (the library escapes label values and formats the exposition).

Request latency is a histogram per route template (`/v1/webhooks/:pk/test`, never a raw
path; `unmatched` for paths that resolve to none), so the label set is bounded by the URL
configuration. The counts are kept by config.metrics, not by a prometheus_client Histogram
object: with REDIS_URL they are folded into Redis so that one scrape sees every gunicorn
process and host (the library's own multi-process mode needs a shared directory on one host),
and the JSON /metrics percentiles (docs/reference/system.md, Metrics) come from the same buckets."""

from prometheus_client.utils import floatToGoString

from config import metrics as request_metrics
from config.jsondoc import JSONObject


def _cumulative(counts: list[tuple[float, int]]) -> list[tuple[str, float]]:
    """Prometheus buckets (upper bound in seconds, cumulative count) from the per-bucket counts
    (upper bound in ms): every bound of BUCKETS_MS, also those no request fell in yet, so that
    each route's series are the same from the first scrape on."""
    per_bound = dict(counts)
    buckets: list[tuple[str, float]] = []
    cumulative = 0
    for bound in [*request_metrics.BUCKETS_MS, float("inf")]:
        cumulative += per_bound.get(float(bound), 0)
        buckets.append(("+Inf" if bound == float("inf") else floatToGoString(bound / 1000.0), cumulative))
    return buckets


class _Snapshot:
    """A prometheus_client collector over one /metrics snapshot (the library escapes label
    values and formats the exposition)."""

    def __init__(self, body: JSONObject) -> None:
        self.body = body

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        body = self.body
        requests = CounterMetricFamily(
            "trustcal_requests", "HTTP requests served under /v1.", labels=["status_class"]
        )
        for status_class, count in body["requests"]["by_status"].items():
            requests.add_metric([status_class], count)
        yield requests
        latency = HistogramMetricFamily(
            "trustcal_request_duration_seconds",
            "Request latency per resolved route (`unmatched` for paths that match none).",
            labels=["route"],
        )
        for route, figures in request_metrics.histograms().items():
            latency.add_metric([route], _cumulative(figures["buckets"]), figures["sum_ms"] / 1000.0)
        yield latency
        for name in ("decisions_logged", "signals_ingested"):
            family = CounterMetricFamily(
                f"trustcal_{name}", f"{name.replace('_', ' ').capitalize()} ({body['scope']} scope)."
            )
            family.add_metric([], body.get(name) or 0)
            yield family
        deliveries = GaugeMetricFamily(
            "trustcal_deliveries", f"Webhook deliveries by status ({body['scope']} scope).", labels=["status"]
        )
        for status, count in (body.get("deliveries") or {}).items():
            deliveries.add_metric([status], count)
        yield deliveries
        queues = GaugeMetricFamily("trustcal_queue_depth", "Queue depths.", labels=["queue"])
        for queue, depth in (body.get("queues") or {}).items():
            if isinstance(depth, int | float):
                queues.add_metric([queue], depth)
        yield queues
        errors = CounterMetricFamily(
            "trustcal_delivery_internal_errors",
            "Errors of the service's own code while sending a webhook (never counted as failed attempts).",
        )
        errors.add_metric([], body.get("delivery_internal_errors") or 0)
        yield errors
        tasks = CounterMetricFamily("trustcal_tasks", "Celery tasks retried or failed.", labels=["outcome"])
        for outcome, count in (body.get("tasks") or {}).items():
            tasks.add_metric([outcome], count)
        yield tasks
        redis = body.get("redis") or {}
        if redis.get("configured"):
            reachable = GaugeMetricFamily(
                "trustcal_redis_reachable",
                "1 while the answering process uses Redis, 0 while it serves from its own state.",
            )
            reachable.add_metric([], 1 if redis.get("reachable") else 0)
            yield reachable


def prometheus_text(body: JSONObject) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(body))  # type: ignore[arg-type]
    return generate_latest(registry).decode("utf-8")
