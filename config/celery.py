"""The Celery app. Beat schedules the periodic work that must survive restarts:
the database holds what is due (delivery rows, export jobs); the broker only says "now"."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("trustcal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

app.conf.beat_schedule = {
    "worker-heartbeat": {"task": "config.tasks.worker_heartbeat", "schedule": 10.0},
    "broker-prune-processed": {"task": "config.tasks.broker_prune_processed", "schedule": 300.0},
}


def register_beat(name: str, task: str, seconds: float) -> None:
    """Apps add their periodic tasks here (called from their tasks module)."""
    app.conf.beat_schedule[name] = {"task": task, "schedule": seconds}


import config.heartbeat  # noqa: E402, F401  (connects the worker heartbeat signals)
