"""A migration that makes an index again (config/dropped_indexes.py) leaves one that an operator
built beforehand under the same name, as docs/deploy.md (Each role) tells them to on a large
PostgreSQL database, and makes it where it is missing."""

from django.db import connection

from config.dropped_indexes import customer_indexes, indexes_made

TABLE, NAME = "audit_decision", "audit_decision_customer_id_41dc395a"


def _indexes() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.get_constraints(cursor, TABLE))


def test_an_index_built_beforehand_is_left_and_a_missing_one_is_made(transactional_db):
    make = indexes_made(customer_indexes(TABLE, NAME))
    assert NAME in _indexes()  # the latest migration made it
    with connection.schema_editor() as editor:
        make.code(None, editor)  # it exists: no error, still there
    assert NAME in _indexes()
    with connection.schema_editor() as editor:
        make.reverse_code(None, editor)  # dropped (with its LIKE twin on PostgreSQL)
    assert NAME not in _indexes()
    with connection.schema_editor() as editor:
        make.code(None, editor)
    assert NAME in _indexes()
