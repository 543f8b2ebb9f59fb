"""The stake weights of the subgroup statistics (docs/architecture.md, Subgroup statistics), and the
statistics rebuilt from the stored decisions: every row's weights, and its category as the
decisions were re-categorised (calibration's migration of the calibration measures).

A decision whose subject was erased before this migration has lost its subgroups: it counts
in no group after the rebuild (the rows cannot tell which of their decisions it was)."""

from django.db import migrations, models

from bias.domain import subgroups_lenient
from bias.stats import Deltas, decision_state

_FIELDS = (
    "customer_id",
    "decision_id",
    "timestamp",
    "model_id",
    "model_version",
    "ai_recommendation",
    "user_decision",
    "ai_confidence",
    "outcome",
    "calibration_category",
    "subgroups",
)


def rebuild(apps, schema_editor):
    Decision = apps.get_model("audit", "Decision")
    Attachment = apps.get_model("bias", "SubgroupAttachment")
    Stat = apps.get_model("bias", "SubgroupDailyStat")
    Stat.objects.all().delete()
    customers = Decision.objects.order_by().values_list("customer_id", flat=True).distinct()
    for customer_id in list(customers):
        attached = dict(
            Attachment.objects.filter(customer_id=customer_id, counted=True).values_list(
                "decision_id", "attributes"
            )
        )
        deltas = Deltas()
        decisions = (
            Decision.objects.filter(customer_id=customer_id, probe_kind__isnull=True)
            .order_by("pk")
            .only(*_FIELDS)
        )
        for decision in decisions.iterator(chunk_size=5000):
            attributes = attached.get(decision.decision_id)
            if attributes is None:
                attributes = subgroups_lenient(decision.subgroups)
            if attributes:
                deltas.add(decision_state(decision), attributes, +1)
        rows = [
            Stat(
                customer_id=customer_id,
                key_hash=key.digest(),
                day=key.day,
                model_id=key.model_id,
                model_version=key.model_version,
                attribute=key.attribute,
                group_value=key.group_value,
                ai_value=key.ai_value,
                human_value=key.human_value,
                category=key.category,
                human_correct=key.human_correct,
                ai_correct=key.ai_correct,
                count=sums[0],
                confidence_count=sums[1],
                confidence_micros=sums[2],
                wo_pico=sums[3],
                wo_sq_pico=sums[4],
                wu_pico=sums[5],
                wu_sq_pico=sums[6],
            )
            for key, sums in sorted(deltas.rows.items())
            if sums[0]
        ]
        Stat.objects.bulk_create(rows, batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [
        ("bias", "0002_finding_q_value"),
        ("audit", "0011_calibration_measures"),
        ("calibration", "0002_calibration_measures"),
    ]

    operations = [
        migrations.AddField(
            model_name="subgroupdailystat",
            name="wo_pico",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="subgroupdailystat",
            name="wo_sq_pico",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="subgroupdailystat",
            name="wu_pico",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="subgroupdailystat",
            name="wu_sq_pico",
            field=models.BigIntegerField(default=0),
        ),
        migrations.RunPython(rebuild, migrations.RunPython.noop),
    ]
