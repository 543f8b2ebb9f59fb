"""The decisions, the audit entries and the tree nodes keep no index of their customer key alone:
an index that leads with `customer_id` serves every read by customer (audit migration 0013); the
text ids keep their primary key's index."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

TABLES = ["audit_decision", "audit_auditentry", "audit_treenode"]


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_the_chain_tables_keep_no_index_a_composite_serves():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s)", [TABLES]
        )
        rows = cursor.fetchall()
    defs = {table: [d for t, _, d in rows if t == table] for table in TABLES}
    for table, definitions in defs.items():
        assert any("(customer_id, " in d for d in definitions), table  # reads by customer keep an index
        assert not [d for d in definitions if d.endswith("(customer_id)")], table
        assert not [d for d in definitions if "customer_id varchar_pattern_ops" in d], table
    assert any(d.startswith("CREATE UNIQUE INDEX") and d.endswith("(id)") for d in defs["audit_auditentry"])
