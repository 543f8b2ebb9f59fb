"""The subgroup daily statistics leave room in their pages again (fillfactor 30, PostgreSQL only),
as migration 0004 did and with the calibration aggregates (calibration migration 0009): every
batch updates its day's rows, and with the room the update is a heap-only one. Every column
summed over these rows is an integer, so the order the rows are read in changes no sum."""

import importlib

from django.db import migrations

_fillfactor = importlib.import_module("bias.migrations.0004_subgroup_stats_fillfactor")._fillfactor


class Migration(migrations.Migration):
    dependencies = [("bias", "0006_customer_index_led_by_composite")]

    operations = [migrations.RunPython(_fillfactor(30), _fillfactor(100))]
