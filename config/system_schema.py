"""The documented shapes of /health, /engines/status and /metrics (docs/reference/system.md),
for the OpenAPI schema that integrators generate clients from. The answers themselves are
built by config.health, config.engines and config.metrics; tests/system/test_generated_client.py
fails when they carry a field that is not declared here."""

from rest_framework import serializers


class HealthCheckOutput(serializers.Serializer):
    status = serializers.ChoiceField(choices=["pass", "fail"])
    latency_ms = serializers.FloatField()
    backend = serializers.CharField(required=False, help_text="cache and broker: what serves them")
    queued = serializers.IntegerField(required=False, help_text="broker: messages waiting")
    online = serializers.IntegerField(required=False, help_text="workers: workers with a recent heartbeat")
    last_heartbeat_at = serializers.CharField(required=False, allow_null=True, help_text="workers")
    tasks = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="workers: Celery tasks `retried` after a database error, and `failed`",
    )
    error = serializers.CharField(
        required=False, help_text="a failed check: the kind of error, never its text"
    )


class HealthChecksOutput(serializers.Serializer):
    database = HealthCheckOutput()
    cache = HealthCheckOutput()
    broker = HealthCheckOutput()
    workers = HealthCheckOutput()
    checkpoint_key = HealthCheckOutput(
        required=False, help_text="the checkpoint signing key can be used (else checkpoints are paused)"
    )


class HealthOutput(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["healthy", "degraded", "unhealthy"],
        help_text="unhealthy (503) when the database fails; degraded when the cache, broker or workers do",
    )
    version = serializers.CharField()
    timestamp = serializers.CharField()
    checks = HealthChecksOutput()


class EngineOutput(serializers.Serializer):
    name = serializers.ChoiceField(
        choices=["calibration", "bias_detection", "amplification", "webhook_delivery", "report_generation"]
    )
    status = serializers.ChoiceField(choices=["operational", "degraded", "down"])
    version = serializers.CharField()
    last_activity_at = serializers.CharField(allow_null=True)
    settings = serializers.DictField(required=False, help_text="calibration: the thresholds in force")
    active_thresholds = serializers.IntegerField(required=False, help_text="calibration, platform scope")
    breached_thresholds = serializers.IntegerField(required=False, help_text="calibration, platform scope")
    alerts_last_24h = serializers.IntegerField(required=False, help_text="bias_detection, platform scope")
    open_alerts = serializers.IntegerField(required=False, help_text="amplification, platform scope")
    workers_online = serializers.IntegerField(required=False)
    pending_deliveries = serializers.IntegerField(required=False)
    due_deliveries = serializers.IntegerField(required=False, help_text="webhook_delivery, platform scope")
    failed_deliveries_24h = serializers.IntegerField(required=False)
    queued_exports = serializers.IntegerField(required=False)
    processing_exports = serializers.IntegerField(required=False)
    failed_exports_24h = serializers.IntegerField(required=False)
    last_completed_at = serializers.CharField(required=False, allow_null=True)


class EnginesStatusOutput(serializers.Serializer):
    engines = EngineOutput(many=True)
    scope = serializers.ChoiceField(
        choices=["customer", "platform"],
        help_text="platform for an admin key; otherwise figures of the caller's own customer only",
    )
    timestamp = serializers.CharField()


class _LatencyOutput(serializers.Serializer):
    count = serializers.IntegerField()
    p50 = serializers.FloatField()
    p95 = serializers.FloatField()
    p99 = serializers.FloatField()


class _ByStatusOutput(serializers.Serializer):
    def get_fields(self):
        return {name: serializers.IntegerField() for name in ("2xx", "3xx", "4xx", "5xx")}


class _RequestsOutput(serializers.Serializer):
    total = serializers.IntegerField()
    by_status = _ByStatusOutput()
    latency_ms = serializers.DictField(
        child=_LatencyOutput(), help_text="per route template; each figure a histogram bucket's upper bound"
    )


class _TasksOutput(serializers.Serializer):
    retried = serializers.IntegerField(help_text="Celery tasks sent again after a database error")
    failed = serializers.IntegerField(
        help_text="Celery tasks that failed (their rows wait for beat's next claim)"
    )


class _DeliveriesOutput(serializers.Serializer):
    pending = serializers.IntegerField()
    succeeded = serializers.IntegerField()
    failed = serializers.IntegerField()
    skipped = serializers.IntegerField()


class _QueuesOutput(serializers.Serializer):
    webhook_deliveries_due = serializers.IntegerField()
    exports_queued = serializers.IntegerField(required=False, help_text="platform scope")
    broker = serializers.IntegerField(required=False, help_text="messages waiting, where the broker can tell")


class _ExportsOutput(serializers.Serializer):
    queued = serializers.IntegerField()
    processing = serializers.IntegerField()
    completed = serializers.IntegerField()
    failed = serializers.IntegerField()


class _AmplificationAlertsOutput(serializers.Serializer):
    open = serializers.IntegerField()
    acknowledged = serializers.IntegerField()
    resolved = serializers.IntegerField()
    false_positive = serializers.IntegerField()


class _RedisOutput(serializers.Serializer):
    configured = serializers.BooleanField(help_text="REDIS_URL is set")
    reachable = serializers.BooleanField(
        help_text="false while this process serves from its own state (docs/deploy.md, When Redis is down)"
    )
    down_since = serializers.CharField(allow_null=True, help_text="when this process found Redis unreachable")
    outages = serializers.IntegerField(help_text="outages this process has seen since it started")


class MetricsOutput(serializers.Serializer):
    scope = serializers.ChoiceField(choices=["customer", "platform"])
    requests = _RequestsOutput(help_text="this service's requests (every customer's: no customer data)")
    decisions_logged = serializers.IntegerField()
    signals_ingested = serializers.IntegerField()
    deliveries = _DeliveriesOutput()
    queues = _QueuesOutput()
    delivery_internal_errors = serializers.IntegerField(
        help_text="deliveries left pending by a bug of the service rather than a failed attempt"
    )
    audit_entries = serializers.IntegerField()
    exports = _ExportsOutput()
    bias_alerts_last_24h = serializers.IntegerField(required=False, help_text="platform scope")
    amplification_alerts = _AmplificationAlertsOutput(required=False, help_text="platform scope")
    tasks = _TasksOutput(help_text="with REDIS_URL every worker's; without, the answering process's")
    redis = _RedisOutput(help_text="the answering process's view of Redis")
    timestamp = serializers.CharField()
