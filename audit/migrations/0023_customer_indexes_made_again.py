"""The decisions', the audit entries' and the tree nodes' own index of their customer key (and,
on PostgreSQL, its LIKE twin), dropped by 0013, made again (config.dropped_indexes, undone): the
composites led by customer_id serve every read by customer, but dropping these gained no more
than the noise end to end in alternating pairs of a 1,000-item batch and of POST /log (the
server's CPU less, both CPUs and the wall time within the noise: bench/README.md, "Performance
code earns its place")."""

import django.db.models.deletion
from django.db import migrations, models

from config.dropped_indexes import customer_indexes, indexes_made


def _customer(related_name: str, *, constrained: bool) -> models.ForeignKey:
    return models.ForeignKey(
        db_constraint=constrained,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="keys.customer",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0022_indexes_made_again"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="auditentry",
                    name="customer",
                    field=_customer("audit_entries", constrained=False),
                ),
                migrations.AlterField(
                    model_name="decision", name="customer", field=_customer("decisions", constrained=True)
                ),
                migrations.AlterField(
                    model_name="treenode", name="customer", field=_customer("+", constrained=False)
                ),
            ],
            database_operations=[
                indexes_made(
                    [
                        *customer_indexes("audit_auditentry", "audit_auditentry_customer_id_582286f6"),
                        *customer_indexes("audit_decision", "audit_decision_customer_id_41dc395a"),
                        *customer_indexes("audit_treenode", "audit_treenode_customer_id_0dee6353"),
                    ]
                )
            ],
        ),
    ]
