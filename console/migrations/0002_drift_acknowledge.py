from django.db import migrations


def give_acknowledge(apps, schema_editor):
    """drift.acknowledge_alarm for the compliance staff group (docs/reference/drift.md, When an
    alarm fires). A fresh database has no permissions until after migrate, so this one is made
    here; the view permissions follow from the console's post_migrate sync."""
    from console.permissions import compliance_staff_group_sync

    db = schema_editor.connection.alias
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(db)
    permissions = apps.get_model("auth", "Permission").objects.using(db)
    alarm, _ = content_types.get_or_create(app_label="drift", model="driftalarm")
    permissions.get_or_create(
        content_type=alarm, codename="acknowledge_alarm", defaults={"name": "Can acknowledge drift alarms"}
    )
    compliance_staff_group_sync(apps.get_model("auth", "Group").objects.using(db), permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0001_compliance_staff_group"),
        ("drift", "0002_alarm_acknowledge_permission"),
    ]

    operations = [migrations.RunPython(give_acknowledge, migrations.RunPython.noop)]
