"""Decisions without a confidence carry no stake weight (docs/reference/calibration.md, Notation):
the subgroup statistics are rebuilt from the stored decisions as migration 0003 rebuilds them,
with the weights of `bias.stats.stake_weights` as they are now."""

import importlib

from django.db import migrations

_rebuild = importlib.import_module("bias.migrations.0003_stake_weights").rebuild


def rebuild(apps, schema_editor):
    if apps.get_model("bias", "SubgroupDailyStat").objects.exists():
        _rebuild(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("bias", "0008_alert_decision_erasable"),
        ("calibration", "0011_outcome_only_no_stake_weight"),
    ]

    operations = [migrations.RunPython(rebuild, migrations.RunPython.noop)]
