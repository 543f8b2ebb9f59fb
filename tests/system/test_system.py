"""System endpoints over HTTP (docs/reference/system.md) and the public schema and docs."""

import datetime as dt
import json
import time
import urllib.error
import urllib.request

import pytest
from django.utils import timezone

from config.models import WorkerHeartbeat
from tests import processes

pytestmark = pytest.mark.django_db


def test_health_is_public_and_reports_every_check(anon_api):
    response = anon_api.get("/v1/health")
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == "1.0.0"
    assert body["timestamp"].endswith("Z")
    assert set(body["checks"]) == {"database", "cache", "broker", "workers", "checkpoint_key"}
    assert body["checks"]["checkpoint_key"]["status"] == "pass"
    assert body["checks"]["database"]["status"] == "pass"
    assert body["checks"]["cache"]["status"] == "pass"
    assert body["checks"]["broker"]["status"] == "pass"


def test_health_is_degraded_without_a_worker_heartbeat_and_healthy_with_one(anon_api):
    WorkerHeartbeat.objects.create(
        hostname="old@host", last_seen=timezone.now() - dt.timedelta(seconds=61), started_at=timezone.now()
    )
    degraded = anon_api.get("/v1/health").json()
    assert degraded["status"] == "degraded" and degraded["checks"]["workers"]["status"] == "fail"
    WorkerHeartbeat.objects.create(hostname="w1@host", last_seen=timezone.now(), started_at=timezone.now())
    healthy = anon_api.get("/v1/health").json()
    assert healthy["status"] == "healthy"
    assert healthy["checks"]["workers"]["online"] == 1


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_a_real_worker_heartbeat_makes_health_healthy(transactional_db, anon_api):
    with processes.celery_worker("heartbeat"):
        deadline = time.time() + 30
        body = anon_api.get("/v1/health").json()
        while body["checks"]["workers"]["status"] != "pass" and time.time() < deadline:
            time.sleep(0.5)
            body = anon_api.get("/v1/health").json()
    assert body["status"] == "healthy", body
    assert body["checks"]["workers"]["online"] >= 1


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_health_answers_503_unhealthy_when_the_database_is_unreachable(transactional_db, tmp_path):
    # A data folder of its own: the embedded broker's belongs to the test database (trustcal.E006).
    unreachable = "postgres://postgres@127.0.0.1:1/unreachable"
    with (
        processes.gunicorn(DATABASE_URL=unreachable, TRUSTCAL_DATA_DIR=str(tmp_path / "data")) as base,
        pytest.raises(urllib.error.HTTPError) as error,
    ):
        urllib.request.urlopen(base + "/v1/health", timeout=10)
    assert error.value.code == 503
    body = json.loads(error.value.read())
    assert body["status"] == "unhealthy" and body["checks"]["database"]["status"] == "fail"


def test_engines_status_needs_a_key_and_lists_engines(anon_api, api):
    assert anon_api.get("/v1/engines/status").status_code == 401
    body = api.get("/v1/engines/status").json()
    assert body["timestamp"].endswith("Z")
    for engine in body["engines"]:
        assert {"name", "status", "version", "last_activity_at"} <= set(engine)
        assert engine["status"] in ("operational", "degraded", "down")


def test_metrics_json_counts_requests_by_status_class_and_group(api):
    api.get("/v1/engines/status")
    api.get("/v1/no-such-route")
    body = api.get("/v1/metrics").json()
    requests = body["requests"]
    assert requests["total"] >= 2
    assert requests["by_status"]["2xx"] >= 1 and requests["by_status"]["4xx"] >= 1
    assert set(requests["by_status"]) == {"2xx", "3xx", "4xx", "5xx"}
    assert {"p50", "p95", "p99"} <= set(requests["latency_ms"]["/v1/engines/status"])
    assert requests["latency_ms"]["unmatched"]["count"] == 1
    for key in ("decisions_logged", "signals_ingested", "deliveries", "queues"):
        assert key in body


def test_metrics_show_no_customer_data(api, other_api):
    body = api.get("/v1/metrics").content.decode()
    assert "acme" not in body and "globex" not in body


@pytest.mark.parametrize("how", [{"HTTP_ACCEPT": "text/plain"}, {"QUERY_STRING": "format=prometheus"}])
def test_metrics_in_prometheus_text_format(api, how):
    api.get("/v1/engines/status")
    response = api.get("/v1/metrics", **how)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert "# TYPE trustcal_requests_total counter" in text
    assert 'trustcal_requests_total{status_class="2xx"}' in text
    assert 'trustcal_request_duration_seconds_bucket{le="+Inf",route="/v1/engines/status"}' in text


def test_schema_and_docs_are_public(anon_api):
    schema = anon_api.get("/v1/schema", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/v1/admin/api-keys" in paths and "/v1/health" in paths
    assert anon_api.get("/v1/docs").status_code == 200


def test_production_settings_refuse_to_start_without_a_real_secret_key(tmp_path):
    import os
    import subprocess
    import sys

    key = tmp_path / "checkpoint.key"
    key.write_text("A" * 43 + "=")
    key.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SECRET_KEY"}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        TRUSTCAL_DATA_DIR=str(tmp_path / "data"),
        TRUSTCAL_CHECKPOINT_KEY=str(key),
        TRUSTCAL_EXPORT_STORAGE_OPTIONS=f'{{"location": "{tmp_path / "reports"}"}}',
    )
    check = [sys.executable, "manage.py", "check"]
    refused = subprocess.run(check, env=env, capture_output=True, text=True, check=False)
    assert refused.returncode != 0 and "DJANGO_SECRET_KEY" in refused.stderr
    env["DJANGO_SECRET_KEY"] = "k" * 50
    accepted = subprocess.run(check, env=env, capture_output=True, text=True, check=False)
    assert accepted.returncode == 0, accepted.stderr


@pytest.mark.slow
@pytest.mark.xdist_group("processes")
def test_health_reports_a_healthy_cache_as_passing_under_concurrent_calls(transactional_db):
    """16 concurrent /health calls against a real gunicorn (the cache shared by its threads, or
    Redis shared by every process): no call sees another's check (docs/reference/limits.md,
    "Health")."""
    from concurrent.futures import ThreadPoolExecutor

    WorkerHeartbeat.objects.create(hostname="w1@host", last_seen=timezone.now(), started_at=timezone.now())

    def one(_: int) -> tuple[str, str]:
        with urllib.request.urlopen(base + "/v1/health", timeout=30) as response:
            body = json.loads(response.read())
        return body["status"], body["checks"]["cache"]["status"]

    with processes.gunicorn(workers=2, threads=8) as base, ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(one, range(200)))
    assert answers == [("healthy", "pass")] * 200, [a for a in answers if a != ("healthy", "pass")][:5]
