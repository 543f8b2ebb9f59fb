"""The audit entries lose the index Django made for their decision key: the one read that used
it, a replayed batch's read of its stored decisions' entries (audit.pipeline._entries_of), goes
by the entries' (customer_id, decision_ref, sequence) index instead, which GET /audit-trail's
decision filter uses too. Each of a batch's 1,000 entries writes one index entry fewer
(config.dropped_indexes). Only the index is dropped: the foreign key stays as it is (Django's
own AlterField would drop and validate it again over every stored row)."""

import django.db.models.deletion
from django.db import migrations, models

from config.dropped_indexes import indexes_dropped


class Migration(migrations.Migration):
    dependencies = [("audit", "0014_entry_id_like_index")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="auditentry",
                    name="decision",
                    field=models.ForeignKey(
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="audit.decision",
                    ),
                )
            ],
            database_operations=[
                indexes_dropped(
                    [("audit_auditentry", "audit_auditentry_decision_id_5c1a8a1b", "decision_id", False)]
                )
            ],
        )
    ]
