from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _sync_per_person_group(sender: AppConfig, using: str = "default", **kwargs: object) -> None:
    from django.contrib.auth.models import Group, Permission

    from oversight.permissions import per_person_group_sync

    # After this app's permissions are created (auth's handler for this app runs first).
    per_person_group_sync(Group.objects.db_manager(using), Permission.objects.db_manager(using))


class OversightConfig(AppConfig):
    """Review effort and vigilance probes: is human oversight of the AI meaningful?"""

    name = "oversight"
    verbose_name = "Human oversight"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_sync_per_person_group, sender=self, dispatch_uid="oversight-per-person-group")
