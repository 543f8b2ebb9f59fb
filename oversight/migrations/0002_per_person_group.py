from django.db import migrations


def create_group(apps, schema_editor):
    from oversight.permissions import per_person_group_sync

    db = schema_editor.connection.alias
    # On a fresh database the permission does not exist yet: the post_migrate handler of the
    # oversight app adds it then, and again after every migrate.
    per_person_group_sync(
        apps.get_model("auth", "Group").objects.using(db), apps.get_model("auth", "Permission").objects.using(db)
    )


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias).filter(
        name="oversight per-person figures"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("oversight", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, delete_group)]
