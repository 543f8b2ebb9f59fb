from django.db import migrations


def create_group(apps, schema_editor):
    from console.permissions import compliance_staff_group_sync

    db = schema_editor.connection.alias
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    # On a fresh database the permissions do not exist yet (they are created after migrate);
    # the post_migrate handler of the console app adds them then, and again after every migrate.
    compliance_staff_group_sync(Group.objects.using(db), Permission.objects.using(db))


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias).filter(
        name="compliance staff"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, delete_group)]
