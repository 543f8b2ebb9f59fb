"""The calibration aggregates back to the default fillfactor (100): at 30 (migration 0006) the
rows of a batch and of the same decisions logged one by one lay in other orders in their
pages, and the organisation's figures, which sum the rows in the order they are read, differed
in their last bits between the two (tests/audit/test_log_batch.py)."""

import importlib

from django.db import migrations

_fillfactor = importlib.import_module("calibration.migrations.0006_aggregates_fillfactor")._fillfactor


class Migration(migrations.Migration):
    dependencies = [("calibration", "0006_aggregates_fillfactor")]

    operations = [migrations.RunPython(_fillfactor(100), _fillfactor(30))]
