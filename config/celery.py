"""The Celery app. Beat schedules the periodic work that must survive restarts:
the database holds what is due (delivery rows, export jobs); the broker only says "now"."""

import os
import sys
from typing import Any

import celery
from celery import Celery, signals
from django.conf import settings
from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from kombu.exceptions import OperationalError
from kombu.transport import TRANSPORT_ALIASES

# The embedded default's broker: kombu's filesystem transport with atomic writes (config/broker.py).
TRANSPORT_ALIASES.setdefault("trustcalfs", "config.broker:Transport")

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")


class Task(celery.Task):
    """Every task of the service.

    A task that cannot reach the database (refused, "too many clients", a dropped connection)
    is sent again after a short backoff, up to five times; each retry and each failure is
    counted in /v1/metrics (`tasks`). A task only says "now": what it works on is a
    database row that beat claims again, so one that still fails is late, not lost
    (docs/deploy.md, "Database connections").

    A publish through a Redis broker that this process knows to be unreachable fails at once
    (kombu's OperationalError, which every caller already handles) instead of waiting on a
    connect timeout in a request (docs/deploy.md, "When Redis is down")."""

    autoretry_for = (DatabaseOperationalError, DatabaseInterfaceError)
    retry_backoff = 1
    retry_backoff_max = 8
    retry_jitter = True
    max_retries = 5

    def apply_async(self, *args: Any, **kwargs: Any) -> Any:  # Any: Celery's own signature
        from config.redis import RedisError, get_redis, redis_failed

        on_redis = bool(settings.REDIS_URL) and app.conf.broker_url == settings.REDIS_URL
        if on_redis and get_redis() is None:
            raise OperationalError("the broker (Redis) is unreachable; beat sends this work again")
        try:
            return super().apply_async(*args, **kwargs)
        except (OperationalError, RedisError) as exc:
            if on_redis:
                redis_failed(exc)
            raise


app = Celery("trustcal", task_cls=Task)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

app.conf.beat_schedule = {
    "broker-prune-processed": {"task": "config.tasks.broker_prune_processed", "schedule": 300.0},
    # Claims due webhook delivery rows (retries live in the database, never in the broker).
    "webhook-deliveries-dispatch": {"task": "webhooks.tasks.deliveries_dispatch_due", "schedule": 2.0},
    # Export jobs whose worker died mid-render, or whose message was lost (the row is the truth).
    "compliance-exports-recover": {
        "task": "compliance.tasks.exports_recover",
        "schedule": settings.EXPORT_RECOVER_SECONDS,
    },
    # Exports past their retention period (job and file).
    "compliance-exports-expire": {"task": "compliance.tasks.exports_expire", "schedule": 3600.0},
    # Full chain checks whose worker died or whose message was lost; and a full check of every
    # chain daily, so an edit before the incremental checkpoint is found (audit/verify.py).
    "audit-verify-jobs-recover": {
        "task": "audit.tasks.verify_jobs_recover",
        "schedule": settings.VERIFY_RECOVER_SECONDS,
    },
    "audit-verify-full-due": {
        "task": "audit.tasks.verify_full_due",
        "schedule": settings.VERIFY_FULL_EVERY_SECONDS,
    },
    # Erasures that came due and each customer's retention run (docs/reference/erasure.md).
    "audit-erasures-run-due": {"task": "audit.tasks.erasures_run_due", "schedule": 3600.0},
    # Erasures on workers whose worker died or whose message was lost.
    "audit-erasures-running-resume": {"task": "audit.tasks.erasures_running_resume", "schedule": 60.0},
    # Drift monitors left `calibrating` by a worker that died or a message that was lost.
    "drift-calibrations-recover": {
        "task": "drift.tasks.calibrations_recover",
        "schedule": settings.DRIFT_CALIBRATION_RECOVER_SECONDS,
    },
    # Staff-defined thresholds (threshold.breached) and risk users.
    "calibration-thresholds-check": {"task": "calibration.tasks.thresholds_check", "schedule": 60.0},
    # Signed checkpoints: every chain that grew gets one when its newest is an hour old.
    "audit-checkpoints-make-due": {"task": "audit.tasks.checkpoints_make_due", "schedule": 300.0},
    # Reviewers who became flagged for quick agreement (oversight.rubber_stamp).
    "oversight-rubber-stamp-check": {"task": "oversight.tasks.rubber_stamp_check", "schedule": 300.0},
}


import config.heartbeat  # noqa: E402, F401  (connects the worker heartbeat signals)


@signals.task_retry.connect
def _task_retried(**kwargs: object) -> None:
    from config.metrics import record_task

    record_task("retried")


@signals.task_failure.connect
def _task_failed(**kwargs: object) -> None:
    from config.metrics import record_task

    record_task("failed")


@signals.worker_init.connect
@signals.beat_init.connect
def _startup_check(**kwargs: object) -> None:
    """A worker or beat refuses to start on a misconfigured host, with the reason (config/checks.py,
    and for a worker config/connections.py).
    SystemExit, because Celery logs and ignores a signal handler's ordinary exception."""
    from django.core.management.base import SystemCheckError

    from config.checks import startup_check

    try:
        startup_check()
    except SystemCheckError as exc:
        sys.stderr.write(f"{exc}\n")
        raise SystemExit(1) from exc
    concurrency = getattr(kwargs.get("sender"), "concurrency", None)  # a worker's, not beat's
    if isinstance(concurrency, int) and concurrency > 0:
        from config.connections import budget_problem, worker_process_connections

        problem = budget_problem("worker", concurrency, worker_process_connections())
        if problem is not None:
            sys.stderr.write(f"{problem}\n")
            raise SystemExit(1)
