"""The subgroups' daily rows' index of their customer key and, on PostgreSQL, its LIKE twin, made
again (config.dropped_indexes, undone): dropping them showed no gain beyond the noise in 10
alternating pairs of a 1,000-item batch (bench/README.md, "Performance code earns its place")."""

import django.db.models.deletion
from django.db import migrations, models

from config.dropped_indexes import customer_indexes, indexes_made


class Migration(migrations.Migration):
    dependencies = [
        ("bias", "0009_outcome_only_no_stake_weight"),
        ("keys", "0002_key_scopes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="subgroupdailystat",
                    name="customer",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="keys.customer"
                    ),
                ),
            ],
            database_operations=[
                indexes_made(
                    customer_indexes("bias_subgroupdailystat", "bias_subgroupdailystat_customer_id_112ec892")
                )
            ],
        ),
    ]
