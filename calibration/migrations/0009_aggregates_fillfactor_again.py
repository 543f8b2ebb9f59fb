"""The calibration aggregates leave room in their pages again (fillfactor 30, PostgreSQL only),
as migration 0006 did: every batch and every POST /log of a reviewer's day updates its daily
and weekly rows, and with the room each update is a heap-only one (no new entry in the table's
indexes). Migration 0007 took it back because the reads summed the rows in the order they lay
in the pages; they now sum them in the order of their key (calibration/selectors.py), so where
a row lies no longer changes a figure. Pages written before keep their fill until the table is
rewritten."""

import importlib

from django.db import migrations

_fillfactor = importlib.import_module("calibration.migrations.0006_aggregates_fillfactor")._fillfactor


class Migration(migrations.Migration):
    dependencies = [("calibration", "0008_customer_indexes_led_by_composites")]

    operations = [migrations.RunPython(_fillfactor(30), _fillfactor(100))]
