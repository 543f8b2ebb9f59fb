"""The subgroup daily statistics leave room in each page for the new versions of their rows
(fillfactor 30, PostgreSQL only), as the calibration aggregates do (calibration migration
0006): every batch updates its day's rows, and with the room the update is a heap-only one."""

from django.db import migrations


def _fillfactor(value: int):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"ALTER TABLE bias_subgroupdailystat SET (fillfactor = {value})")

    return apply


class Migration(migrations.Migration):
    dependencies = [("bias", "0003_stake_weights")]

    operations = [migrations.RunPython(_fillfactor(30), _fillfactor(100))]
