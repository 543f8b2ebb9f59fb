"""The weekly trigger takes a changed or deleted daily row's sums from its week's row only when
that row exists (it used to add the negated sums as a new row, so a flush that emptied the weekly
table first left rows behind that referenced deleted customers)."""

from django.db import migrations

from calibration import weekly

COLUMNS = [
    "n", "followed", "overtrust", "undertrust", "conf_n", "conf_sum", "outcome_n", "ai_right_n",
    "followed_wrong", "overrode_right", "gap_sum", "scored_n", "scored_followed", "p_sum", "q_sum",
    "a_conf_sum", "oo_n", "wo_sum", "wo_sq", "fwo_sum", "wu_sum", "wu_sq", "uwu_sum", "cy_n",
    "brier_sum", "sw_den", "sw_num", "rair_den", "rair_num", "rsr_den", "rsr_num",
]  # fmt: skip


def install(apps, schema_editor):
    for statement in weekly.install_sql(schema_editor.connection.vendor, COLUMNS):
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("calibration", "0003_weekly_sums")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
