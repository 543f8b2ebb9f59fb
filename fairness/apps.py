from django.apps import AppConfig


class FairnessConfig(AppConfig):
    name = "fairness"
    default_auto_field = "django.db.models.BigAutoField"
