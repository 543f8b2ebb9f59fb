"""The decisions, the audit entries and the tree nodes lose the index Django made for their
customer key (and, on PostgreSQL, its `varchar_pattern_ops` twin for LIKE): the unique
(customer_id, decision_id), (customer_id, sequence) and (customer_id, level, index) lead with
the same column, so every read by customer keeps an index, and a batch of 1,000 decisions
writes two index entries fewer per decision, per entry and per tree node. Only the indexes are
dropped: the foreign keys stay as they are (Django's own AlterField would drop and validate
them again over every stored row)."""

import django.db.models.deletion
from django.db import migrations, models

# (table, the index Django named for its customer_id)
INDEXES = [
    ("audit_auditentry", "audit_auditentry_customer_id_582286f6"),
    ("audit_decision", "audit_decision_customer_id_41dc395a"),
    ("audit_treenode", "audit_treenode_customer_id_0dee6353"),
]


def _each(schema_editor, plain: str, like: str) -> None:
    postgresql = schema_editor.connection.vendor == "postgresql"
    for table, name in INDEXES:
        schema_editor.execute(plain.format(table=table, name=name))
        if postgresql:
            schema_editor.execute(like.format(table=table, name=name))


def drop(apps, schema_editor):
    _each(schema_editor, "DROP INDEX IF EXISTS {name}", "DROP INDEX IF EXISTS {name}_like")


def create(apps, schema_editor):
    _each(
        schema_editor,
        "CREATE INDEX {name} ON {table} (customer_id)",
        "CREATE INDEX {name}_like ON {table} (customer_id varchar_pattern_ops)",
    )


def _customer(related_name: str) -> models.ForeignKey:
    return models.ForeignKey(
        db_index=False,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="keys.customer",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0012_confidence_check_index"),
        ("keys", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="auditentry", name="customer", field=_customer("audit_entries")
                ),
                migrations.AlterField(model_name="decision", name="customer", field=_customer("decisions")),
                migrations.AlterField(model_name="treenode", name="customer", field=_customer("+")),
            ],
            database_operations=[migrations.RunPython(drop, create)],
        ),
    ]
