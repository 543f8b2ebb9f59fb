"""The calibration measures of docs/reference/calibration.md: the daily aggregate's new columns
(docs/architecture.md, Calibration aggregates), every stored decision re-categorised by the record
rule (decisions with neither a confidence nor an outcome become UNSCORED; a confidence now judges
the act even where an outcome is known) and the aggregates rebuilt from the decisions. The audit
entries keep the category they were written with (they are history, and their hashes cover it);
events already sent stay as they were."""

import datetime as dt
from collections import defaultdict

from django.db import migrations, models

from audit.measures import SUM_FIELDS, Record, contribution, record_category

ALL_MODELS = "*"


def rebuild(apps, schema_editor):
    Decision = apps.get_model("audit", "Decision")
    Aggregate = apps.get_model("calibration", "UserDailyAggregate")
    Aggregate.objects.all().delete()
    rows: dict[tuple, dict[str, float]] = defaultdict(lambda: dict.fromkeys(SUM_FIELDS, 0))
    changed = []
    columns = (
        "pk",
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
        "probe_kind",
    )
    for values in Decision.objects.order_by("pk").values_list(*columns).iterator(chunk_size=5000):
        pk, customer_id, user_id, model_id, timestamp, rec, dec, conf, outcome, initial, old, probe = values
        category = record_category(
            ai_recommendation=rec,
            user_decision=dec,
            confidence=conf,
            outcome=outcome,
            probe=probe is not None,
        )
        if category != old:
            changed.append((pk, category))
        if len(changed) >= 2000:
            _save(Decision, changed)
            changed = []
        if probe is not None:
            continue  # vigilance probes enter no calibration figure
        record = Record(rec, dec, conf, outcome, initial, category)
        day = timestamp.astimezone(dt.UTC).date()
        for key in [ALL_MODELS] + ([model_id] if model_id else []):
            row = rows[(customer_id, user_id, key, day)]
            for name, value in contribution(record).items():
                row[name] += value
    _save(Decision, changed)
    batch = []
    columns = {field.name for field in Aggregate._meta.get_fields()}
    for (customer_id, user_id, key, day), sums in sorted(rows.items()):
        known = {name: value for name, value in sums.items() if name in columns}  # a later column waits
        batch.append(Aggregate(customer_id=customer_id, user_id=user_id, model_key=key, day=day, **known))
        if len(batch) >= 2000:
            Aggregate.objects.bulk_create(batch)
            batch = []
    Aggregate.objects.bulk_create(batch)


def _save(Decision, changed):
    by_category: dict[str, list] = defaultdict(list)
    for pk, category in changed:
        by_category[category].append(pk)
    for category, pks in by_category.items():
        Decision.objects.filter(pk__in=pks).update(calibration_category=category)


class Migration(migrations.Migration):
    dependencies = [
        ("calibration", "0001_initial"),
        ("audit", "0011_calibration_measures"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="ar_num",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b0_conf",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b0_followed",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b0_n",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b1_conf",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b1_followed",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b1_n",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b2_conf",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b2_followed",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b2_n",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b3_conf",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b3_followed",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b3_n",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b4_conf",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b4_followed",
        ),
        migrations.RemoveField(
            model_name="userdailyaggregate",
            name="b4_n",
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="a_conf_sum",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="brier_sum",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="cy_n",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="fwo_sum",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="oo_n",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="p_sum",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="q_sum",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="scored_followed",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="scored_n",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="uwu_sum",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="wo_sq",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="wo_sum",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="wu_sq",
            field=models.FloatField(default=0),
        ),
        migrations.AddField(
            model_name="userdailyaggregate",
            name="wu_sum",
            field=models.FloatField(default=0),
        ),
        migrations.RunPython(rebuild, migrations.RunPython.noop),
    ]
