from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0018_drift_entry_types"),
    ]

    operations = [
        migrations.AddField(
            model_name="chainhead",
            name="followers",
            field=models.IntegerField(default=0),
        ),
    ]
