"""The subgroup daily statistics lose the index Django made for their customer key (and, on
PostgreSQL, its LIKE twin): the unique (customer_id, key_hash) and the attribute indexes lead
with it, so every read by customer keeps an index, and each row the statistics upsert writes
writes two index entries fewer. Only the indexes go: the foreign key stays
(config.dropped_indexes)."""

from django.db import migrations

from config.dropped_indexes import customer_indexes, customer_key_unindexed, indexes_dropped


class Migration(migrations.Migration):
    dependencies = [
        ("bias", "0005_subgroup_stats_fillfactor_back"),
        ("keys", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[customer_key_unindexed("subgroupdailystat", "+")],
            database_operations=[
                indexes_dropped(customer_indexes("bias_subgroupdailystat", "bias_subgroupdailystat_customer_id_112ec892"))
            ],
        ),
    ]
