"""The audit entries lose the LIKE twin (`varchar_pattern_ops`) Django made, on PostgreSQL, for
their text primary key: an entry is read by its id with equality (the primary key's index) and
never matched with LIKE, so each of a batch's 1,000 entries writes one index entry fewer
(config.dropped_indexes). The model is unchanged: Django's state does not name the twin."""

from django.db import migrations

from config.dropped_indexes import indexes_dropped, like_twin


class Migration(migrations.Migration):
    dependencies = [("audit", "0013_customer_indexes_led_by_composites")]

    operations = [indexes_dropped([like_twin("audit_auditentry", "audit_auditentry_id_38caba25_like")])]
