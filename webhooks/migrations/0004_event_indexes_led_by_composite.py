"""The events lose the index Django made for their customer key and, on PostgreSQL, its LIKE
twin and the LIKE twin of their text id: the (customer_id, type, created_at) index leads with
the customer, the id is read by equality (its primary key) and no query matches either with
LIKE, and a batch's events (one per miscalibrated decision) write three index entries fewer
each. Only the indexes go: the foreign key stays (config.dropped_indexes)."""

from django.db import migrations

from config.dropped_indexes import customer_indexes, customer_key_unindexed, indexes_dropped, like_twin


class Migration(migrations.Migration):
    dependencies = [
        ("keys", "0001_initial"),
        ("webhooks", "0003_dispatch_fairness"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[customer_key_unindexed("event", "events")],
            database_operations=[
                indexes_dropped(
                    [
                        *customer_indexes("webhooks_event", "webhooks_event_customer_id_cdcfcaed"),
                        like_twin("webhooks_event", "webhooks_event_id_136b0861_like"),
                    ]
                )
            ],
        ),
    ]
