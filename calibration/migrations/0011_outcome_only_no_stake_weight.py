"""Outcome-only decisions carry no stake weight (docs/reference/calibration.md, Notation): the
aggregates' new column `oo_followed_wrong` (decisions without a confidence, followed where the
outcome shows the AI wrong: `followed_ai_errors`), the stake-weight columns and the incident
counts (`overtrust`, `undertrust`) now from decisions with a confidence only. The weekly trigger
is installed again for the new column list, and every daily row is re-derived from the stored
decisions (vigilance probes aside, as always); the weekly rows follow by the trigger. Record
categories stay as they were."""

import datetime as dt
from collections import defaultdict

from django.db import migrations, models

from audit.measures import Record, contribution
from calibration import weekly

ALL_MODELS = "*"
COLUMNS = [
    "n", "followed", "overtrust", "undertrust", "conf_n", "conf_sum", "outcome_n", "ai_right_n",
    "followed_wrong", "overrode_right", "gap_sum", "scored_n", "scored_followed", "p_sum", "q_sum",
    "a_conf_sum", "oo_n", "wo_sum", "wo_sq", "fwo_sum", "wu_sum", "wu_sq", "uwu_sum", "cy_n",
    "brier_sum", "sw_den", "sw_num", "rair_den", "rair_num", "rsr_den", "rsr_num", "oo_followed_wrong",
]  # fmt: skip


def install(apps, schema_editor):
    for statement in weekly.install_sql(schema_editor.connection.vendor, COLUMNS):
        schema_editor.execute(statement)


def rebuild(apps, schema_editor):
    Decision = apps.get_model("audit", "Decision")
    Daily = apps.get_model("calibration", "UserDailyAggregate")
    Weekly = apps.get_model("calibration", "UserWeeklyAggregate")
    if not Daily.objects.exists():
        return
    Weekly.objects.all().delete()  # the weekly rows first: the trigger then finds none to change
    Daily.objects.all().delete()
    rows: dict[tuple, dict[str, float]] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    columns = (
        "customer_id",
        "user_id",
        "model_id",
        "timestamp",
        "ai_recommendation",
        "user_decision",
        "ai_confidence",
        "outcome",
        "initial_decision",
        "calibration_category",
    )
    decisions = Decision.objects.filter(probe_kind__isnull=True).order_by("pk").values_list(*columns)
    for values in decisions.iterator(chunk_size=5000):
        customer_id, user_id, model_id, timestamp, rec, dec, conf, outcome, initial, category = values
        sums = contribution(Record(rec, dec, conf, outcome, initial, category))
        day = timestamp.astimezone(dt.UTC).date()
        for key in [ALL_MODELS] + ([model_id] if model_id else []):
            row = rows[(customer_id, user_id, key, day)]
            for name, value in sums.items():
                if name in row:
                    row[name] += value
    batch = []
    for (customer_id, user_id, key, day), sums in sorted(rows.items()):
        batch.append(Daily(customer_id=customer_id, user_id=user_id, model_key=key, day=day, **sums))
        if len(batch) >= 2000:
            Daily.objects.bulk_create(batch)
            batch = []
    Daily.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [
        ("calibration", "0010_weekly_fold_on_conflict"),
        ("audit", "0015_entry_decision_key_unindexed"),
    ]

    operations = [
        migrations.AddField(
            model_name="userdailyaggregate",
            name="oo_followed_wrong",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="userweeklyaggregate",
            name="oo_followed_wrong",
            field=models.BigIntegerField(default=0),
        ),
        migrations.RunPython(install, migrations.RunPython.noop),
        migrations.RunPython(rebuild, migrations.RunPython.noop),
    ]
