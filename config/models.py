from django.db import models


class WorkerHeartbeat(models.Model):
    """One row per Celery worker; /health and /engines/status read it (works across hosts)."""

    hostname = models.CharField(max_length=255, unique=True)
    last_seen = models.DateTimeField()
    started_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.hostname
