"""The events' index of their customer key and, on PostgreSQL, its LIKE twin and their id's, made
again (config.dropped_indexes, undone): dropping them showed no gain beyond the noise in 10
alternating pairs of a 1,000-item batch (bench/README.md, "Performance code earns its place")."""

import django.db.models.deletion
from django.db import migrations, models

from config.dropped_indexes import customer_indexes, indexes_made, like_twin


class Migration(migrations.Migration):
    dependencies = [
        ("keys", "0002_key_scopes"),
        ("webhooks", "0004_event_indexes_led_by_composite"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="event",
                    name="customer",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="events", to="keys.customer"
                    ),
                ),
            ],
            database_operations=[
                indexes_made(customer_indexes("webhooks_event", "webhooks_event_customer_id_cdcfcaed"))
            ],
        ),
        indexes_made([like_twin("webhooks_event", "webhooks_event_id_136b0861_like")]),
    ]
