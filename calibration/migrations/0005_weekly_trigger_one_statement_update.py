"""The weekly trigger, on PostgreSQL, folds an update that keeps the daily row's keys and week
(every additive upsert of the daily rows) into its week's row with one statement instead of
three, with the same sums (calibration/weekly.py, `_move`). It is installed again as the
previous migration installs it, for the same summed columns."""

import importlib

from django.db import migrations

_previous = importlib.import_module("calibration.migrations.0004_weekly_trigger_update_in_place")


class Migration(migrations.Migration):
    dependencies = [("calibration", "0004_weekly_trigger_update_in_place")]

    operations = [migrations.RunPython(_previous.install, migrations.RunPython.noop)]
