"""Each Celery worker writes a heartbeat row every 10 s from a thread of its own, so /health
and /engines/status know how many workers are alive on any host
(docs/reference/system.md, Health)."""

import datetime as dt
import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

logger = logging.getLogger("trustcal.heartbeat")
INTERVAL_SECONDS = 10.0
_stop = threading.Event()


def heartbeat_write(hostname: str) -> None:
    from config.models import WorkerHeartbeat

    now = timezone.now()
    updated = WorkerHeartbeat.objects.filter(hostname=hostname).update(last_seen=now)
    if not updated:
        WorkerHeartbeat.objects.update_or_create(
            hostname=hostname, defaults={"last_seen": now, "started_at": now}
        )


def _loop(hostname: str) -> None:
    while not _stop.is_set():
        try:
            close_old_connections()
            heartbeat_write(hostname)
        except Exception:
            logger.warning("heartbeat write failed", exc_info=True)
        finally:
            connection.close()
        _stop.wait(INTERVAL_SECONDS)


@worker_ready.connect
def _start(sender=None, **kwargs) -> None:
    hostname = getattr(sender, "hostname", None) or "worker"
    _stop.clear()
    threading.Thread(target=_loop, args=(hostname,), name="trustcal-heartbeat", daemon=True).start()


@worker_shutdown.connect
def _stop_heartbeat(sender=None, **kwargs) -> None:
    _stop.set()


def workers_online() -> int:
    """Workers whose last heartbeat is fresh (WORKER_HEARTBEAT_MAX_AGE_SECONDS)."""
    from config.models import WorkerHeartbeat

    since = timezone.now() - dt.timedelta(seconds=settings.WORKER_HEARTBEAT_MAX_AGE_SECONDS)
    return WorkerHeartbeat.objects.filter(last_seen__gte=since).count()


def workers_recent(*, limit: int = 10) -> list:
    """The latest heartbeats, freshest first (for the staff console's worker panel)."""
    from config.models import WorkerHeartbeat

    return list(WorkerHeartbeat.objects.order_by("-last_seen")[:limit])
