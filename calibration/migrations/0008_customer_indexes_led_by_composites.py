"""The daily and weekly aggregates lose the index Django made for their customer key (and, on
PostgreSQL, its LIKE twin): their unique keys and model indexes lead with `customer_id`, so
every read by customer keeps an index, and each version of a row the daily upsert and its
weekly trigger write (a batch updates about 400 of each) writes two index entries fewer. Only
the indexes go: the foreign keys stay (config.dropped_indexes)."""

from django.db import migrations

from config.dropped_indexes import customer_indexes, customer_key_unindexed, indexes_dropped

DAILY, WEEKLY = "calibration_userdailyaggregate", "calibration_userweeklyaggregate"


class Migration(migrations.Migration):
    dependencies = [
        ("calibration", "0007_aggregates_fillfactor_back"),
        ("keys", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                customer_key_unindexed("userdailyaggregate", "calibration_days"),
                customer_key_unindexed("userweeklyaggregate", "calibration_weeks"),
            ],
            database_operations=[
                indexes_dropped(
                    [
                        *customer_indexes(DAILY, f"{DAILY}_customer_id_6bc2b159"),
                        *customer_indexes(WEEKLY, f"{WEEKLY}_customer_id_931191ef"),
                    ]
                )
            ],
        ),
    ]
