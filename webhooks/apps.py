from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from webhooks.url_safety import url_rules

        url_rules()  # a bad WEBHOOK_ALLOWED_NETWORKS entry is a failed start, on web hosts and workers
