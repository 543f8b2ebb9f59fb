from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_bootstrap_admin_key(sender: AppConfig, **kwargs: object) -> None:
    from django.conf import settings

    if settings.TRUSTCAL_BOOTSTRAP_ADMIN_KEY:
        from keys.services import bootstrap_admin_key_ensure

        bootstrap_admin_key_ensure(value=settings.TRUSTCAL_BOOTSTRAP_ADMIN_KEY)


class KeysConfig(AppConfig):
    name = "keys"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # TRUSTCAL_BOOTSTRAP_ADMIN_KEY: `migrate` makes sure that admin key exists
        # (docs/reference/access.md, Bootstrap).
        post_migrate.connect(_ensure_bootstrap_admin_key, sender=self)
        # A key changed while Redis was unreachable could not renew the keys' stamp: when Redis
        # answers again, renew it, so that no process uses a key it cached before (keys/keycache.py).
        from config.redis import on_redis_back
        from keys.keycache import keys_cache_renew

        on_redis_back(keys_cache_renew)
        import keys.schema  # noqa: F401  (registers the API key scheme with drf-spectacular)
