"""Export jobs (docs/reference/reports.md). The row is the truth about a report: a worker claims it with a lease,
renders it, stores the file through Django's storage API and completes it; a worker that
dies mid-render leaves a lease that expires, and the recovery task queues the job again."""

from django.db import models
from django.utils import timezone

from config.ids import new_id
from keys.models import Customer


def _export_id() -> str:
    return new_id("exp")


class ExportJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        PROCESSING = "processing"
        COMPLETED = "completed"
        FAILED = "failed"

    id = models.CharField(primary_key=True, max_length=40, default=_export_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="exports")
    template = models.CharField(max_length=32)
    format = models.CharField(max_length=8)
    # As requested (echoed in the API), and as exact bounds: [period_start, period_end).
    time_period = models.JSONField(default=dict)
    period_start = models.DateTimeField()
    period_end = models.DateTimeField()
    filters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    # Processing: until when the worker holds the job (renewed while it renders). Queued: when
    # the recovery task sends the job's message again if no worker has claimed it by then.
    lease_until = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    file_name = models.CharField(max_length=255, blank=True, default="")
    size_bytes = models.BigIntegerField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    compliance_status = models.CharField(max_length=32, blank=True, default="")
    requested_by = models.CharField(max_length=255, blank=True, default="")
    # Whether the report carries oversight figures per reviewer (docs/reference/oversight.md, "Who
    # sees what"): false when staff without oversight.view_reviewer_figures requested it in the
    # console, so the worker renders team figures only; an API key's request always carries them.
    per_person_figures = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["customer", "-created_at"], name="compl_exp_cust_created"),
            models.Index(fields=["status", "lease_until"], name="compl_exp_status_lease"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.template}.{self.format} {self.status}"

    @property
    def download_url(self) -> str | None:
        return f"/v1/export/{self.id}/download" if self.status == self.Status.COMPLETED else None


# The fields of a system profile (docs/reference/system-profiles.md), in the order the reports
# print them, with their longest text.
PROFILE_FIELDS: dict[str, int] = {
    "name": 200,
    "purpose": 2000,
    "deployment_context": 2000,
    "provider": 200,
    "version": 100,
    "intended_reviewers": 1000,
}


class SystemProfile(models.Model):
    """What the deployer says of one of its models (a `model_id` its decisions carry): printed in
    both report templates, "not provided" for an empty field. Edited through the API and the
    console by the same service (compliance/profiles.py)."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="system_profiles")
    model_id = models.CharField(max_length=256)
    name = models.CharField(max_length=PROFILE_FIELDS["name"], blank=True, default="")
    purpose = models.TextField(max_length=PROFILE_FIELDS["purpose"], blank=True, default="")
    deployment_context = models.TextField(
        max_length=PROFILE_FIELDS["deployment_context"], blank=True, default=""
    )
    provider = models.CharField(max_length=PROFILE_FIELDS["provider"], blank=True, default="")
    version = models.CharField(max_length=PROFILE_FIELDS["version"], blank=True, default="")
    intended_reviewers = models.TextField(
        max_length=PROFILE_FIELDS["intended_reviewers"], blank=True, default=""
    )
    updated_at = models.DateTimeField(default=timezone.now)
    updated_by = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["customer", "model_id"], name="compl_profile_cust_model")
        ]
        verbose_name = "system profile"

    def __str__(self) -> str:
        return f"{self.model_id} ({self.name})" if self.name else self.model_id
