"""The tables a batch writes keep only indexes some read uses (docs/architecture.md, "The set-wise
batch path"): no index of the customer key alone nor LIKE twin where an index leads with
`customer_id`, and the text ids keep their primary key's index (config/dropped_indexes.py)."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

TABLES = [
    "audit_decision",
    "audit_auditentry",
    "audit_treenode",
    "calibration_userdailyaggregate",
    "calibration_userweeklyaggregate",
    "bias_subgroupdailystat",
    "webhooks_event",
]


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_the_tables_a_batch_writes_keep_no_index_a_composite_serves():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s)", [TABLES]
        )
        rows = cursor.fetchall()
    defs = {table: [d for t, _, d in rows if t == table] for table in TABLES}
    for table, definitions in defs.items():
        assert any("(customer_id, " in d for d in definitions), table  # reads by customer keep an index
        assert not [d for d in definitions if d.endswith("(customer_id)")], table
        assert not [d for d in definitions if "varchar_pattern_ops" in d], table
    for table in ("audit_auditentry", "webhooks_event"):
        assert any(d.startswith("CREATE UNIQUE INDEX") and d.endswith("(id)") for d in defs[table]), table


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_the_entries_keep_no_index_of_their_decision_key_and_their_decisions_entries_are_read_by_ref():
    """The one read of a decision's entries (a replay's, audit.pipeline._entries_of) goes by
    (customer_id, decision_ref, sequence); the decision key's own index is dropped."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'audit_auditentry'")
        definitions = [d for (d,) in cursor.fetchall()]
    assert not [d for d in definitions if "(decision_id" in d], definitions
    assert [d for d in definitions if d.endswith("(customer_id, decision_ref, sequence)")], definitions
