from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig


class CoreConfig(AppConfig):
    name = "config"
    label = "core"
    verbose_name = "Trustcal core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import config.celery
        import config.checks  # noqa: F401  (registers the start checks)
        from config.clientaddr import trusted_proxies
        from config.datadir import data_dir_prepare

        data_dir_prepare()
        trusted_proxies()  # a bad TRUSTCAL_TRUSTED_PROXIES entry is a failed start, not a 500 later


class TrustcalAdminConfig(AdminConfig):
    """django.contrib.admin with the staff console (config.admin_site) as the default site."""

    default_site = "config.admin_site.TrustcalAdminSite"
