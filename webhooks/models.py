from django.db import models
from django.utils import timezone

from config.ids import new_id
from keys.models import Customer


def _event_id() -> str:
    return new_id("evt")


class Event(models.Model):
    """Every event is stored before delivery (C14); the id is the envelope's id and
    idempotency key."""

    id = models.CharField(primary_key=True, max_length=40, default=_event_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=64)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["customer", "type", "-created_at"]), models.Index(fields=["-created_at"])]

    def __str__(self) -> str:
        return f"{self.id} {self.type}"
