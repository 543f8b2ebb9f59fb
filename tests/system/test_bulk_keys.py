"""A large bulk insert draws its rows' keys in one statement (config.db.bulk.KEYS_SQL) that looks the
table's sequence up once, not once per key."""

import pytest
from django.db import connection

from config.db.bulk import KEYS_SQL

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

KEYS = 1000


def test_drawing_a_thousand_keys_looks_the_sequence_up_once():
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {KEYS_SQL}", ["audit_decision", "id", KEYS])
        plan = cursor.fetchone()[0]
        cursor.execute(KEYS_SQL, ["audit_decision", "id", KEYS])
        keys = [key for (key,) in cursor.fetchall()]
    plan = plan[0]["Plan"] if isinstance(plan, list) else plan
    pages = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]
    # nextval reads the sequence's one page per key; a lookup per key read three catalog pages more
    assert pages < 1.5 * KEYS, plan
    assert len(set(keys)) == KEYS and keys == sorted(keys)
