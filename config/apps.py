from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "config"
    label = "core"
    verbose_name = "Trustcal core"
    default_auto_field = "django.db.models.BigAutoField"
