"""State of the review-effort check: which reviewers are flagged now, and when each was last
announced (oversight.rubber_stamp fires when a reviewer becomes flagged, at most once per 24 h)."""

from django.db import models
from django.utils import timezone

from keys.models import Customer


class RubberStampState(models.Model):
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="rubber_stamp_states")
    user_id = models.CharField(max_length=256)
    flagged = models.BooleanField(default=False)
    quick_agreement_rate = models.FloatField(null=True, blank=True)
    last_fired_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # Figures per reviewer are worker monitoring (docs/reference/oversight.md, "Who sees
        # what"): the staff console shows them only to holders of this permission, which the
        # "oversight per-person figures" group holds and the compliance-staff group does not.
        permissions = [
            ("view_team_figures", "Can see the team's oversight figures"),
            ("view_reviewer_figures", "Can see oversight figures per reviewer"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["customer", "user_id"], name="oversight_rubber_stamp_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.customer_id}/{self.user_id} {'flagged' if self.flagged else 'clear'}"
