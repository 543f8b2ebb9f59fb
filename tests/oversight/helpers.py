"""Decisions for the oversight tests, logged over HTTP (POST /log/batch: the same validation and
effects as POST /log, item by item)."""

import datetime as dt
import itertools
from typing import Any

from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from config.models import StaffOrganisation
from keys.models import Customer

_ids = itertools.count(1)


def ago(**delta: float) -> str:
    return (timezone.now() - dt.timedelta(**delta)).isoformat()


def decision(
    user: str, *, seconds: float | None = None, followed: bool = True, **extra: Any
) -> dict[str, Any]:
    """A decision of `user` one hour ago; `followed` picks the user's decision."""
    body: dict[str, Any] = {
        "decision_id": f"d{next(_ids)}",
        "user_id": user,
        "model_id": "m1",
        "ai_recommendation": "approve",
        "user_decision": "approve" if followed else "deny",
        "timestamp": ago(hours=1),
    }
    if seconds is not None:
        body["review_seconds"] = seconds
    body.update(extra)
    return body


def probe(user: str, kind: str, *, followed: bool, **extra: Any) -> dict[str, Any]:
    """A probe: known_wrong (the right answer is `deny`) or known_right (`approve`)."""
    correct = "deny" if kind == "known_wrong" else "approve"
    return decision(user, followed=followed, probe={"kind": kind, "correct_decision": correct}, **extra)


def log_all(api, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), 1000):
        r = api.post("/v1/log/batch", {"decisions": items[start : start + 1000]}, format="json")
        assert r.status_code == 200, r.content
        assert r.json()["rejected"] == 0, [x for x in r.json()["results"] if x["status"] >= 400][:3]


def staff_client(name: str, *groups: str, organisations: tuple[str, ...] = ("acme",)) -> Client:
    """A console client signed in as a new staff user in `groups`, assigned `organisations`."""
    user = User.objects.create_user(name, f"{name}@example.com", "pw", is_staff=True)
    for customer_id in organisations:
        customer, _ = Customer.objects.get_or_create(id=customer_id)
        StaffOrganisation.objects.create(user=user, customer=customer)
    for group in groups:
        user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return client
