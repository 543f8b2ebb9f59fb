"""The daily and weekly calibration aggregates leave room in each page for the new versions of
their rows (fillfactor 30, PostgreSQL only): a row is updated by every batch and every
POST /log of its reviewer's day (and, for the week, the whole week), so with the room the
update is a heap-only one (no new entry in any of the table's indexes, and the old versions
are pruned from the page as it is next read, without a vacuum). Measured with a 1,000-item
batch: 16 % of the updates heap-only at the default fillfactor, all of them at 30; the daily
upsert's backend CPU about 0.7 of before (bench/README.md). Pages written before keep their
fill until the table is rewritten."""

from django.db import migrations

TABLES = ("calibration_userdailyaggregate", "calibration_userweeklyaggregate")


def _fillfactor(value: int):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in TABLES:
            schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = {value})")

    return apply


class Migration(migrations.Migration):
    dependencies = [("calibration", "0005_weekly_trigger_one_statement_update")]

    operations = [migrations.RunPython(_fillfactor(30), _fillfactor(100))]
