"""The daily and weekly aggregates' index of their customer key and, on PostgreSQL, its LIKE twin,
made again (config.dropped_indexes, undone): dropping them showed no gain beyond the noise in 10
alternating pairs of a 1,000-item batch (bench/README.md, "Performance code earns its place")."""

import django.db.models.deletion
from django.db import migrations, models

from config.dropped_indexes import customer_indexes, indexes_made


class Migration(migrations.Migration):
    dependencies = [
        ("calibration", "0011_outcome_only_no_stake_weight"),
        ("keys", "0002_key_scopes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="userdailyaggregate",
                    name="customer",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="calibration_days",
                        to="keys.customer",
                    ),
                ),
                migrations.AlterField(
                    model_name="userweeklyaggregate",
                    name="customer",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="calibration_weeks",
                        to="keys.customer",
                    ),
                ),
            ],
            database_operations=[
                indexes_made(
                    [
                        *customer_indexes(
                            "calibration_userdailyaggregate",
                            "calibration_userdailyaggregate_customer_id_6bc2b159",
                        ),
                        *customer_indexes(
                            "calibration_userweeklyaggregate",
                            "calibration_userweeklyaggregate_customer_id_931191ef",
                        ),
                    ]
                )
            ],
        ),
    ]
