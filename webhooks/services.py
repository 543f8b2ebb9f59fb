"""Writes for events and webhooks. Every domain emits events through event_emit()."""

from typing import Any

from django.db import transaction

from keys.models import Customer
from webhooks.events import EVENT_REGULATIONS
from webhooks.models import Event


def event_emit(*, customer: Customer, type: str, data: dict[str, Any]) -> Event:
    """Store an event inside the caller's transaction. `data` carries the ids a receiver
    needs; `regulation` is added where interface.md's events table names one."""
    if type not in EVENT_REGULATIONS:
        raise ValueError(f"unknown event type {type!r}")
    payload = dict(data)
    regulation = EVENT_REGULATIONS[type]
    if regulation is not None:
        payload.setdefault("regulation", regulation)
    with transaction.atomic():
        event = Event.objects.create(customer=customer, type=type, data=payload)
    return event
