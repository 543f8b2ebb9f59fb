from django.apps import AppConfig


class DriftConfig(AppConfig):
    """Drift monitors and alarms: sequential charts of reliance on the AI, of the AI's
    calibration and of vigilance probes (docs/reference/drift.md)."""

    name = "drift"
    label = "drift"
    verbose_name = "Drift monitors"
    default_auto_field = "django.db.models.BigAutoField"
