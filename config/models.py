from django.conf import settings
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


class StaffOrganisation(models.Model):
    """An organisation (a customer) a staff user who is not a superuser may see and act on in
    the console (docs/reference/access.md, "Staff and their organisations"); Access -> Users
    assigns them. A staff user with none sees no organisation's rows."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="staff_organisations"
    )
    customer = models.ForeignKey("keys.Customer", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "customer"], name="config_staff_organisation_once")
        ]
        verbose_name = "organisation"

    def __str__(self) -> str:
        return f"{self.user_id}: {self.customer_id}"
