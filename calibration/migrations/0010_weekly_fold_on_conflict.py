"""The weekly trigger, on PostgreSQL, folds an update that keeps the daily row's keys and week
by an INSERT ... ON CONFLICT on the week's unique key instead of an UPDATE (calibration/weekly.py,
`_move`): the same sums to the bit, and the week's row found through its unique index whatever
the table's statistics. It is installed again as migration 0004 installs it, for the same
summed columns."""

import importlib

from django.db import migrations

_previous = importlib.import_module("calibration.migrations.0004_weekly_trigger_update_in_place")


class Migration(migrations.Migration):
    dependencies = [("calibration", "0009_aggregates_fillfactor_again")]

    operations = [migrations.RunPython(_previous.install, migrations.RunPython.noop)]
