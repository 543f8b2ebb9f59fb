"""Django admin: webhooks with the enable action, deliveries with attempts and "retry now"."""

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User

from tests.webhooks.helpers import emit, webhook
from webhooks import dispatch
from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    user = User.objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return client


def test_admin_lists_and_shows_webhooks_and_deliveries_without_secrets(staff, insecure, receiver):
    hook, secret = webhook(receiver.url, ["*"])
    emit()
    dispatch.deliveries_dispatch_due()
    delivery = Delivery.objects.get()
    pages = [
        "/admin/webhooks/webhook/",
        f"/admin/webhooks/webhook/{hook.pk}/change/",
        "/admin/webhooks/delivery/?status__exact=succeeded&event_type__exact=bias.detected",
        f"/admin/webhooks/delivery/{delivery.pk}/change/",
    ]
    for page in pages:
        response = staff.get(page)
        assert response.status_code == 200, page
        assert secret not in response.content.decode()
    assert "delivery attempts" in staff.get(pages[3]).content.decode().lower()  # the attempts inline


def test_admin_enable_action_and_retry_now_action(staff, insecure, receiver):
    hook, _ = webhook(receiver.url, ["*"])
    emit()
    delivery = Delivery.objects.get()
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", attempt_count=5, next_attempt_at=None)
    Webhook.objects.filter(pk=hook.pk).update(status="disabled", disabled_reason="delivery_failures")

    staff.post("/admin/webhooks/webhook/", {"action": "enable_webhooks", "_selected_action": [hook.pk]})
    assert Webhook.objects.get(pk=hook.pk).status == "enabled"

    staff.post("/admin/webhooks/delivery/", {"action": "retry_now", "_selected_action": [delivery.pk]})
    delivery.refresh_from_db()
    assert delivery.status == "pending" and delivery.next_attempt_at is not None
    dispatch.deliveries_dispatch_due()
    delivery.refresh_from_db()
    assert delivery.status == "succeeded" and delivery.attempt_count == 6
    logged = set(LogEntry.objects.values_list("object_id", "change_message"))
    assert {(hook.pk, "Enabled"), (delivery.pk, "Scheduled for an attempt now")} <= logged


def test_admin_edits_follow_the_url_and_event_rules(staff, settings, insecure, receiver):
    hook, _ = webhook(receiver.url, ["*"])
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    page = f"/admin/webhooks/webhook/{hook.pk}/change/"
    response = staff.post(page, {"url": "https://127.0.0.1/x", "events": '["nope"]', "description": ""})
    assert response.status_code == 200  # the form again, with errors
    assert Webhook.objects.get(pk=hook.pk).url == receiver.url
    response = staff.post(
        page, {"url": "https://93.184.216.34/x", "events": '["bias.detected"]', "description": "d"}
    )
    assert response.status_code == 302
    assert Webhook.objects.get(pk=hook.pk).events == ["bias.detected"]
