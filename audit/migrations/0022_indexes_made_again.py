"""The audit entries' index of their decision key and, on PostgreSQL, their id's LIKE twin, made
again (config.dropped_indexes, undone): dropping them showed no gain beyond the noise in 10
alternating pairs of a 1,000-item batch (bench/README.md, "Performance code earns its place")."""

import django.db.models.deletion
from django.db import migrations, models

from config.dropped_indexes import indexes_made, like_twin


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0021_keys_checked_through_head"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="auditentry",
                    name="decision",
                    field=models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="audit.decision",
                    ),
                ),
            ],
            database_operations=[
                indexes_made(
                    [("audit_auditentry", "audit_auditentry_decision_id_5c1a8a1b", "decision_id", False)]
                )
            ],
        ),
        indexes_made([like_twin("audit_auditentry", "audit_auditentry_id_38caba25_like")]),
    ]
