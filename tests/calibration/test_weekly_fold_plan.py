"""The weekly trigger's fold of an updated daily row (calibration/weekly.py, `_move`) finds its
week's row through the week's unique key whatever the weekly table's statistics: on a table never
analysed (autovacuum off, a fresh database) it reads that one row, not the week's row of every
reviewer of the model."""

import datetime as dt

import pytest
from django.db import connection

from calibration import rules
from calibration.models import UserDailyAggregate
from config.db.bulk import additive_upsert
from keys.models import Customer

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

REVIEWERS = 60
DAY = dt.date(2026, 11, 4)
UPDATES = 10


def _upsert(customer_id: str, users: list[str]) -> None:
    sums = dict.fromkeys(rules.SUM_FIELDS, 0) | {"n": 1, "conf_n": 1, "conf_sum": 0.3}
    additive_upsert(
        UserDailyAggregate,
        key=("customer_id", "user_id", "model_key", "day"),
        values=rules.SUM_FIELDS,
        rows=[(customer_id, user, "*", DAY, *(sums[name] for name in rules.SUM_FIELDS)) for user in users],
    )


def _never_analysed(cursor, table: str) -> None:
    """The statistics as a fresh database has them (the test's transaction takes them back)."""
    cursor.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", [table])
    cursor.execute("UPDATE pg_class SET relpages = 0, reltuples = -1 WHERE oid = %s::regclass", [table])
    cursor.execute(
        "UPDATE pg_class SET relpages = 1, reltuples = 0 WHERE oid IN "
        "(SELECT indexrelid FROM pg_index WHERE indrelid = %s::regclass)",
        [table],
    )


def _weekly_rows_fetched(cursor) -> int:
    """The weekly rows this transaction has fetched through any of the table's indexes."""
    cursor.execute(
        "SELECT sum(pg_stat_get_xact_tuples_fetched(indexrelid)) FROM pg_index "
        "WHERE indrelid = 'calibration_userweeklyaggregate'::regclass"
    )
    return int(cursor.fetchone()[0])


def test_an_updated_day_reads_only_its_week_row_on_a_weekly_table_never_analysed(api):
    customer = Customer.objects.get(pk="acme")
    _upsert(customer.pk, [f"rev-{n}" for n in range(REVIEWERS)])  # 60 week rows of one model and week
    with connection.cursor() as cursor:
        _never_analysed(cursor, "calibration_userweeklyaggregate")
        before = _weekly_rows_fetched(cursor)
        # days' rows updated, their keys and weeks kept, one statement each: the trigger's plan is
        # cached after five executions (PL/pgSQL's generic plan)
        for n in range(UPDATES):
            _upsert(customer.pk, [f"rev-{n}"])
        fetched = _weekly_rows_fetched(cursor) - before
    assert fetched <= 2 * UPDATES, fetched
