"""/metrics and /engines/status: grouped by resolved route (bounded, escaped), and no figure
that moves when another customer acts (docs/reference/system.md, What a non-admin key sees)."""

import pytest
from django.conf import settings

from tests.webhooks.helpers import emit, webhook

pytestmark = pytest.mark.django_db

DECISION = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "approve", "ai_confidence": 0.9}


def test_a_path_with_a_colon_does_not_break_metrics(api):
    assert api.get("/v1/x:y").status_code == 404
    assert api.get("/v1/metrics").status_code == 200
    assert api.get("/v1/metrics", HTTP_ACCEPT="text/plain").status_code == 200


def test_a_crafted_path_cannot_inject_a_prometheus_line(api):
    api.get('/v1/a"} 1\nforged_metric 999')
    api.get("/v1/webhooks/whk_nope")  # a real route: grouped under its pattern, never its path
    text = api.get("/v1/metrics", HTTP_ACCEPT="text/plain").content.decode()
    assert not any(line.startswith("forged_metric") for line in text.splitlines())
    assert 'route="unmatched"' in text and 'route="/v1/webhooks/:pk"' in text


def test_unknown_paths_count_in_one_group_and_do_not_grow_the_response(api):
    api.get("/v1/unknown-0")
    before = api.get("/v1/metrics").json()["requests"]["latency_ms"]
    for i in range(1, 500):
        api.get(f"/v1/unknown-{i}")
    after = api.get("/v1/metrics").json()["requests"]["latency_ms"]
    assert set(after) == set(before) | {"/v1/metrics"}
    assert after["unmatched"]["count"] == 500


def _visible(client):
    metrics = client.get("/v1/metrics").json()
    engines = client.get("/v1/engines/status").json()["engines"]
    figures = {k: metrics.get(k) for k in ("decisions_logged", "signals_ingested", "deliveries")}
    figures.update({k: v for k, v in metrics.items() if k.startswith(("bias_", "amplification", "audit_"))})
    return figures, engines


def test_another_customers_activity_does_not_move_what_a_customer_sees(api, other_api, admin_api, settings):
    mine_before, engines_before = _visible(api)
    platform_before = admin_api.get("/v1/metrics").json()
    assert other_api.post("/v1/log", DECISION, format="json").status_code == 201
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    webhook("http://127.0.0.1:9/hook", ["*"], name="globex")
    emit("bias.detected", name="globex")
    mine_after, engines_after = _visible(api)
    assert mine_after == mine_before
    assert engines_after == engines_before
    assert api.get("/v1/metrics").json()["scope"] == "customer"
    platform_after = admin_api.get("/v1/metrics").json()
    assert platform_after["scope"] == "platform"
    assert platform_after["decisions_logged"] == platform_before["decisions_logged"] + 1
    # the caller's own figures do move with its own activity
    assert api.post("/v1/log", DECISION, format="json").status_code == 201
    assert api.get("/v1/metrics").json()["decisions_logged"] == mine_before["decisions_logged"] + 1


def test_engines_for_a_customer_carry_no_last_activity_of_others(api, other_api):
    other_api.post("/v1/log", DECISION, format="json")
    for engine in api.get("/v1/engines/status").json()["engines"]:
        assert engine["last_activity_at"] is None
        assert not {"alerts_last_24h", "open_alerts", "active_thresholds"} & set(engine)


@pytest.mark.django_db(transaction=True)
def test_concurrent_health_calls_never_trip_over_each_others_broker_probe():
    """The embedded broker's health probe was one shared file: concurrent calls unlinked each
    other's and reported the broker failing (degraded)."""
    import threading

    from django.db import connection
    from rest_framework.test import APIClient

    if settings.REDIS_URL:
        pytest.skip("the file probe is the embedded broker's; with Redis the broker check pings")
    checks: list[str] = []

    def call() -> None:
        for _ in range(10):
            checks.append(APIClient().get("/v1/health").json()["checks"]["broker"]["status"])
        connection.close()

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert checks == ["pass"] * 80
