"""oversight.probe_missed and oversight.rubber_stamp (docs/reference/oversight.md, "Events"):
stored, subscribable by name and by `*`, delivered to a real loopback receiver and verified
with standardwebhooks; the rubber-stamp check's once-per-24-hours rule."""

import datetime as dt
import json

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks import Webhook as Verifier

from config.celery import app
from oversight import services
from oversight import tasks as oversight_tasks
from tests.oversight.helpers import decision, log_all, probe
from tests.webhooks.helpers import customer, webhook
from webhooks import dispatch
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def _deliveries(receiver, secret):
    dispatch.deliveries_dispatch_due()
    return [Verifier(secret).verify(r.body, r.headers) for r in receiver.requests]


def test_a_missed_known_wrong_probe_fires_probe_missed_at_once(api, insecure, receiver):
    _, secret = webhook(receiver.url, ["oversight.probe_missed"])
    log_all(
        api,
        [
            probe("ann", "known_wrong", followed=True, decision_id="miss-1", model_id="credit-v3"),
            probe("ann", "known_wrong", followed=False),  # caught
            probe("bob", "known_right", followed=True),  # not a known_wrong probe
            decision("cyd", followed=True, outcome="deny"),  # a real miss: trust.miscalibrated only
        ],
    )
    r = api.post(
        "/v1/log",
        probe("bob", "known_wrong", followed=True, decision_id="miss-2", model_id=None),
        format="json",
    )
    assert r.status_code == 201
    bodies = _deliveries(receiver, secret)
    assert [b["type"] for b in bodies] == ["oversight.probe_missed"] * 2
    assert bodies[0]["data"] == {
        "decision_id": "miss-1",
        "user_id": "ann",
        "model_id": "credit-v3",
        "regulation": "EU AI Act Art. 14(4)(b)",
    }
    assert bodies[1]["data"]["decision_id"] == "miss-2" and bodies[1]["data"]["model_id"] is None


def test_the_new_events_are_listed_and_subscribable_by_name_and_star(api, insecure, receiver):
    for name in ["oversight.rubber_stamp", "oversight.probe_missed"]:
        r = api.post("/v1/webhooks", {"url": f"{receiver.url}/{name}", "events": [name]}, format="json")
        assert r.status_code == 201, r.content
        deliveries = api.get(f"/v1/webhooks/{r.json()['webhook_id']}/deliveries", {"event_type": name})
        assert deliveries.status_code == 200, deliveries.content
    r = api.post("/v1/webhooks", {"url": receiver.url, "events": ["oversight.nope"]}, format="json")
    assert r.status_code == 400 and r.json()["code"] == "WEBHOOK_INVALID_EVENT"
    schema = api.get("/v1/schema", {"format": "json"})
    assert b"oversight.rubber_stamp" in schema.content and b"oversight.probe_missed" in schema.content


def _rubber_stamper(user: str, n: int = 25) -> list[dict]:
    """n timed decisions, every one a quick agreement, against a model median of 60 s."""
    return [decision(user, seconds=1.0, followed=True) for _ in range(n)]


def test_a_reviewer_who_becomes_flagged_fires_rubber_stamp_once_per_24_hours(api, insecure, receiver):
    _, secret = webhook(receiver.url, ["*"])
    acme = customer("acme")
    log_all(api, [decision("carol", seconds=60.0) for _ in range(60)])
    assert services.rubber_stamp_check(customer=acme) == 0
    log_all(api, _rubber_stamper("rick"))
    now = timezone.now()
    assert services.rubber_stamp_check(customer=acme, now=now) == 1
    assert services.rubber_stamp_check(customer=acme, now=now + dt.timedelta(minutes=5)) == 0  # still flagged
    bodies = _deliveries(receiver, secret)
    assert [b["type"] for b in bodies] == ["oversight.rubber_stamp"]
    assert bodies[0]["data"] == {
        "user_id": "rick",
        "quick_agreement_rate": 1.0,
        "timed_decisions": 25,
        "window_days": 30,
        "regulation": "EU AI Act Art. 14(4)(b), 26(2)",
    }
    # rick's quick agreements are diluted below the flag, then return within 24 h: no second event
    log_all(api, [decision("rick", seconds=90.0, followed=False) for _ in range(200)])
    assert services.rubber_stamp_check(customer=acme, now=now + dt.timedelta(hours=1)) == 0
    log_all(api, _rubber_stamper("rick", 400))
    assert services.rubber_stamp_check(customer=acme, now=now + dt.timedelta(hours=2)) == 0
    # cleared again, then flagged again more than 24 h after the event: it fires
    log_all(api, [decision("rick", seconds=90.0, followed=False) for _ in range(3000)])
    with time_machine.travel(now + dt.timedelta(hours=3), tick=False):
        assert services.rubber_stamp_check(customer=acme) == 0
    log_all(api, _rubber_stamper("rick", 2000))
    with time_machine.travel(now + dt.timedelta(hours=25), tick=False):
        assert services.rubber_stamp_check(customer=acme) == 1
    assert Event.objects.filter(type="oversight.rubber_stamp").count() == 2


def test_the_periodic_check_runs_at_least_every_5_minutes_over_active_customers(api):
    entry = app.conf.beat_schedule["oversight-rubber-stamp-check"]
    assert entry["task"] == "oversight.tasks.rubber_stamp_check" and entry["schedule"] <= 300
    log_all(api, [decision("carol", seconds=60.0) for _ in range(30)] + _rubber_stamper("rick"))
    result = oversight_tasks.rubber_stamp_check.apply().get()
    assert result == {"checked": 1, "fired": 1}
    event = Event.objects.get(type="oversight.rubber_stamp")
    assert json.loads(json.dumps(event.data))["user_id"] == "rick"
    assert oversight_tasks.rubber_stamp_check.apply().get() == {"checked": 1, "fired": 0}
