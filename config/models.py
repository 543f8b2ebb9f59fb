from django.db import models


class WorkerHeartbeat(models.Model):
    """One row per Celery worker; /health and /engines/status read it (works across hosts)."""

    hostname = models.CharField(max_length=255, unique=True)
    last_seen = models.DateTimeField()
    started_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.hostname


class DeploymentKey(models.Model):
    """The fingerprint of a key every host of a deployment must share, recorded by the first
    process that started (config/deployment_keys.py): a host with another key refuses to start."""

    name = models.CharField(max_length=40, primary_key=True)
    fingerprint = models.CharField(max_length=64)
    registered_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name
