from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _sync_compliance_staff(sender, using="default", apps=None, **kwargs) -> None:
    from django.contrib.auth.models import Group, Permission

    from console.permissions import compliance_staff_group_sync

    # After every migrate (and flush): the permissions of models added since exist by now, because
    # this app comes last in INSTALLED_APPS and each app's permissions are created on its own signal.
    compliance_staff_group_sync(Group.objects.db_manager(using), Permission.objects.db_manager(using))


class ConsoleConfig(AppConfig):
    """The staff console: the overview panels, the cross-app pages, the compliance-staff group and
    `seed_demo`. It presents the other apps through their selectors and changes them only through
    their services."""

    name = "console"
    verbose_name = "Staff console"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_sync_compliance_staff, sender=self, dispatch_uid="console-compliance-staff")
