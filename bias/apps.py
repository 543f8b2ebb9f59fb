from django.apps import AppConfig


class BiasConfig(AppConfig):
    name = "bias"
    default_auto_field = "django.db.models.BigAutoField"
