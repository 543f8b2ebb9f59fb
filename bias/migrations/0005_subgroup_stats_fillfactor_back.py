"""The subgroup daily statistics back to the default fillfactor (100), as the calibration
aggregates (calibration migration 0007)."""

import importlib

from django.db import migrations

_fillfactor = importlib.import_module("bias.migrations.0004_subgroup_stats_fillfactor")._fillfactor


class Migration(migrations.Migration):
    dependencies = [("bias", "0004_subgroup_stats_fillfactor")]

    operations = [migrations.RunPython(_fillfactor(100), _fillfactor(30))]
