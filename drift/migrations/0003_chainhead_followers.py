"""Each customer's chain head counts its enabled drift monitors (audit's ChainHead.followers)."""

from django.db import migrations
from django.db.models import Count


def count(apps, schema_editor):
    ChainHead = apps.get_model("audit", "ChainHead")
    DriftMonitor = apps.get_model("drift", "DriftMonitor")
    enabled = (
        DriftMonitor.objects.filter(deleted_at__isnull=True, enabled=True)
        .values("customer_id")
        .annotate(n=Count("pk"))
    )
    for row in enabled:
        ChainHead.objects.filter(customer_id=row["customer_id"]).update(followers=row["n"])


class Migration(migrations.Migration):
    dependencies = [
        ("drift", "0002_alarm_acknowledge_permission"),
        ("audit", "0019_chainhead_followers"),
    ]

    operations = [migrations.RunPython(count, migrations.RunPython.noop)]
