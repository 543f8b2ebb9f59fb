"""The webhook endpoints over HTTP: bodies, codes, URL safety, tenancy (docs/reference/webhooks.md)."""

import pytest

from tests.webhooks.helpers import emit

pytestmark = pytest.mark.django_db


def _create(api, url, events=None, **extra):
    return api.post(
        "/v1/webhooks", {"url": url, "events": events or ["bias.detected"], **extra}, format="json"
    )


def test_create_returns_the_secret_once_and_list_and_get_never_show_it(api, insecure, receiver):
    response = _create(api, receiver.url, ["bias.detected", "trust.miscalibrated"], description="ops")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"webhook_id", "url", "secret", "events", "description", "status", "created_at"}
    assert body["webhook_id"].startswith("whk_") and body["status"] == "enabled"
    assert body["secret"].startswith("whsec_") and body["events"] == ["bias.detected", "trust.miscalibrated"]
    assert body["created_at"].endswith("Z")

    listed = api.get("/v1/webhooks").json()
    assert listed["pagination"]["total"] == 1
    one = api.get(f"/v1/webhooks/{body['webhook_id']}").json()
    assert set(one) == {
        "webhook_id",
        "url",
        "events",
        "description",
        "status",
        "disabled_reason",
        "disabled_at",
        "created_at",
        "updated_at",
    }
    assert body["secret"] not in str(listed) and body["secret"] not in str(one)


def test_url_resolving_to_loopback_is_refused_when_insecure_urls_are_not_allowed(api, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    for url in [
        "https://localhost/hook",
        "https://127.0.0.1/hook",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
    ]:
        response = _create(api, url)
        assert response.status_code == 400, url
        assert response.json()["code"] == "WEBHOOK_INVALID_URL", url


@pytest.mark.parametrize(
    "url",
    [
        "http://93.184.216.34/hook",  # not https
        "ftp://93.184.216.34/hook",
        "https://10.1.2.3/hook",  # private
        "https://192.168.0.10/hook",
        "https://169.254.169.254/latest/meta-data",  # link-local (cloud metadata)
        "https://224.0.0.1/hook",  # multicast
        "https://240.0.0.1/hook",  # reserved
        "https://0.0.0.0/hook",  # unspecified
        "https://100.64.0.1/hook",  # shared address space, not global
        "https://user:pw@93.184.216.34/hook",
        "https://no-such-host.invalid/hook",
        "not a url",
        "",
    ],
)
def test_unsafe_or_malformed_urls_are_refused(api, settings, url):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    response = _create(api, url)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "WEBHOOK_INVALID_URL" and body["errors"][0]["field"] == "url"


def test_a_public_https_address_is_accepted(api, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    assert _create(api, "https://93.184.216.34/hook").status_code == 201


@pytest.mark.parametrize(
    "events", [[], ["nope"], ["bias.detected", "webhook.test"], "bias.detected", [1], None]
)
def test_empty_or_unknown_events_are_refused(api, insecure, receiver, events):
    response = api.post("/v1/webhooks", {"url": receiver.url, "events": events}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "WEBHOOK_INVALID_EVENT"


def test_every_catalogue_event_and_star_is_subscribable(api, insecure, receiver):
    from webhooks.events import EVENT_TYPES

    assert _create(api, receiver.url, [*EVENT_TYPES, "*"]).status_code == 201


def test_missing_url_is_a_validation_error(api):
    response = api.post("/v1/webhooks", {"events": ["*"]}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "VALIDATION_ERROR"


def test_patch_validates_like_create_and_updates(api, insecure, receiver):
    hook = _create(api, receiver.url).json()
    path = f"/v1/webhooks/{hook['webhook_id']}"
    assert api.patch(path, {"events": []}, format="json").json()["code"] == "WEBHOOK_INVALID_EVENT"
    assert api.patch(path, {"url": "gopher://x"}, format="json").json()["code"] == "WEBHOOK_INVALID_URL"
    response = api.patch(path, {"events": ["*"], "description": "all"}, format="json")
    assert response.status_code == 200
    assert response.json()["events"] == ["*"] and response.json()["description"] == "all"


def test_delete_answers_204_and_then_404(api, insecure, receiver):
    hook = _create(api, receiver.url).json()
    assert api.delete(f"/v1/webhooks/{hook['webhook_id']}").status_code == 204
    assert api.get(f"/v1/webhooks/{hook['webhook_id']}").status_code == 404


def test_another_customers_webhook_is_404_everywhere(api, other_api, insecure, receiver):
    hook_id = _create(api, receiver.url).json()["webhook_id"]
    base = f"/v1/webhooks/{hook_id}"
    assert other_api.get(base).status_code == 404
    assert other_api.patch(base, {"description": "x"}, format="json").status_code == 404
    assert other_api.delete(base).status_code == 404
    for action in ("test", "rotate-secret", "enable"):
        assert other_api.post(f"{base}/{action}").status_code == 404
    assert other_api.get(f"{base}/deliveries").status_code == 404
    assert other_api.get("/v1/webhooks").json()["pagination"]["total"] == 0


def test_enable_on_an_enabled_webhook_is_409(api, insecure, receiver):
    hook_id = _create(api, receiver.url).json()["webhook_id"]
    response = api.post(f"/v1/webhooks/{hook_id}/enable")
    assert response.status_code == 409 and response.json()["code"] == "WEBHOOK_ALREADY_ENABLED"


def test_rotate_secret_returns_the_new_secret_and_grace_end(api, insecure, receiver):
    hook = _create(api, receiver.url).json()
    response = api.post(f"/v1/webhooks/{hook['webhook_id']}/rotate-secret")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"webhook_id", "secret", "previous_secret_expires_at"}
    assert body["secret"].startswith("whsec_") and body["secret"] != hook["secret"]


def test_test_endpoint_makes_one_signed_attempt_and_records_it(api, insecure, receiver, eager_tasks):
    from standardwebhooks import Webhook as Verifier

    hook = _create(api, receiver.url).json()
    response = api.post(f"/v1/webhooks/{hook['webhook_id']}/test")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"delivery_id", "event_id", "success", "response_status", "duration_ms", "error"}
    assert body["success"] is True and body["response_status"] == 200 and body["error"] is None
    payload = Verifier(hook["secret"]).verify(receiver.requests[0].body, receiver.requests[0].headers)
    assert payload["type"] == "webhook.test" and payload["id"] == body["event_id"]

    history = api.get(f"/v1/webhooks/{hook['webhook_id']}/deliveries").json()["data"]
    assert history[0]["delivery_id"] == body["delivery_id"] and history[0]["status"] == "succeeded"
    assert len(history[0]["attempts"]) == 1 and history[0]["next_attempt_at"] is None


def test_failed_test_event_is_recorded_once_and_never_retried(api, insecure, receiver, eager_tasks):
    import datetime as dt

    import time_machine
    from django.utils import timezone

    from webhooks.dispatch import deliveries_dispatch_due

    receiver.always(500, b"boom")
    hook = _create(api, receiver.url).json()
    body = api.post(f"/v1/webhooks/{hook['webhook_id']}/test").json()
    assert body["success"] is False and body["response_status"] == 500 and "500" in body["error"]
    with time_machine.travel(timezone.now() + dt.timedelta(hours=3)):
        assert deliveries_dispatch_due() == 0
    delivery = api.get(f"/v1/webhooks/{hook['webhook_id']}/deliveries").json()["data"][0]
    assert delivery["status"] == "failed" and delivery["attempt_count"] == 1 and len(receiver.requests) == 1
    assert api.get(f"/v1/webhooks/{hook['webhook_id']}").json()["status"] == "enabled"


def test_deliveries_filter_by_status_and_event_type_with_paging(
    api, insecure, receiver, django_assert_max_num_queries
):
    from webhooks.dispatch import deliveries_dispatch_due
    from webhooks.models import Webhook

    hook_id = _create(api, receiver.url, ["*"]).json()["webhook_id"]
    for _ in range(3):
        emit("bias.detected")
    emit("trust.miscalibrated")
    deliveries_dispatch_due()
    Webhook.objects.filter(pk=hook_id).update(status="disabled")
    emit("audit.required")

    path = f"/v1/webhooks/{hook_id}/deliveries"
    with django_assert_max_num_queries(6):
        everything = api.get(path, {"limit": 2}).json()
    assert everything["pagination"] == {"page": 1, "limit": 2, "total": 5, "total_pages": 3, "has_more": True}
    first = everything["data"][0]
    assert set(first) == {
        "delivery_id",
        "event_id",
        "event_type",
        "status",
        "attempt_count",
        "next_attempt_at",
        "last_response_status",
        "created_at",
        "attempts",
    }
    assert first["event_type"] == "audit.required" and first["status"] == "skipped"
    assert api.get(path, {"event_type": "bias.detected"}).json()["pagination"]["total"] == 3
    succeeded = api.get(path, {"status": "succeeded"}).json()["data"]
    assert len(succeeded) == 4 and all(d["attempts"][0]["response_status"] == 200 for d in succeeded)
    assert set(succeeded[0]["attempts"][0]) == {
        "attempt",
        "attempted_at",
        "response_status",
        "duration_ms",
        "error",
    }
    assert api.get(path, {"status": "bogus"}).json()["code"] == "VALIDATION_ERROR"


def test_engine_status_and_metrics_report_deliveries(api, insecure, receiver):
    from django.core.cache import cache

    _create(api, receiver.url, ["*"])
    emit("bias.detected")
    cache.clear()
    engines = {e["name"]: e for e in api.get("/v1/engines/status").json()["engines"]}
    engine = engines["webhook_delivery"]
    assert engine["pending_deliveries"] == 1 and engine["failed_deliveries_24h"] == 0
    assert engine["status"] in {"operational", "degraded", "down"}
    metrics = api.get("/v1/metrics").json()
    assert metrics["deliveries"]["pending"] == 1 and metrics["queues"]["webhook_deliveries_due"] == 1


def test_trailing_slash_reaches_the_same_handler_and_bad_bodies_are_4xx(api, insecure, receiver):
    response = api.post("/v1/webhooks/", {"url": receiver.url, "events": ["*"]}, format="json")
    assert response.status_code == 201
    hook_id = response.json()["webhook_id"]
    assert api.post(f"/v1/webhooks/{hook_id}/rotate-secret/").status_code == 200
    assert api.get(f"/v1/webhooks/{hook_id}/deliveries/").status_code == 200
    assert api.put(f"/v1/webhooks/{hook_id}", {}, format="json").status_code == 405
    assert (
        api.post("/v1/webhooks", "not json", content_type="application/json").json()["code"] == "INVALID_JSON"
    )
    assert api.post("/v1/webhooks", [1], format="json").json()["code"] == "VALIDATION_ERROR"
