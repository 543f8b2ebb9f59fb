"""Bulk writes: inserts for the batch paths (COPY on PostgreSQL, bulk_create elsewhere) and
the one additive upsert of every counter table.

Django's bulk_create binds every value of a multi-row INSERT client-side; for 1,000 rows of
20 columns psycopg splits a 20,000-placeholder query and Django prepares each value (about
0.3 s per 1,000 decisions measured). COPY streams the rows instead."""

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models

COPY_FROM = 50  # rows from which COPY is cheaper than one multi-row INSERT


def _values(fields: list[models.Field], obj: models.Model) -> list:
    return [field.get_db_prep_save(getattr(obj, field.attname), connection) for field in fields]


def bulk_insert(model: type[models.Model], objs: Sequence[models.Model], *, with_ids: bool = False) -> None:
    """Insert `objs` (all fields set except, with `with_ids`, an auto primary key, which is
    drawn from the table's sequence first and set on each object)."""
    if not objs:
        return
    if connection.vendor != "postgresql" or len(objs) <= COPY_FROM:
        # One INSERT (RETURNING the primary keys on PostgreSQL): for a few rows one statement
        # beats drawing ids and then streaming a COPY (two).
        model._default_manager.bulk_create(objs, batch_size=500)
        return
    meta = model._meta
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        if with_ids:
            assert meta.pk is not None and meta.pk.column is not None
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [meta.db_table, meta.pk.column, len(objs)],
            )
            for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
                obj.pk = pk
        fields = list(meta.concrete_fields)
        columns = ", ".join(qn(str(field.column)) for field in fields)
        with cursor.cursor.copy(f"COPY {qn(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                copy.write_row(_values(fields, obj))
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias


def additive_upsert(
    model: type[models.Model],
    *,
    key: Sequence[str],
    values: Sequence[str],
    rows: Iterable[Sequence[Any]],
    add: Sequence[str] | None = None,
    batch: int = 500,
) -> None:
    """Insert rows of counters, or add them to the stored ones: one
    `INSERT ... ON CONFLICT (key) DO UPDATE SET c = c + EXCLUDED.c` per `batch` rows.

    `rows` hold the `key` columns then the `values` columns; `add` names the columns added on
    conflict (all of `values` by default), the others keep their stored value. The rows are
    written in key order, so concurrent writers lock shared rows in the same order and never
    deadlock. Column names come from the caller's code, never from input; values are bound."""
    ordered = sorted(rows, key=lambda row: tuple(row[: len(key)]))
    if not ordered:
        return
    qn = connection.ops.quote_name
    table = qn(model._meta.db_table)
    columns = ", ".join(qn(name) for name in (*key, *values))
    row_sql = "(" + ", ".join(["%s"] * (len(key) + len(values))) + ")"
    updates = ", ".join(
        f"{qn(name)} = {table}.{qn(name)} + EXCLUDED.{qn(name)}" for name in (values if add is None else add)
    )
    conflict = f"ON CONFLICT ({', '.join(qn(name) for name in key)}) " + (
        f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
    )
    with connection.cursor() as cursor:
        for start in range(0, len(ordered), batch):
            chunk = ordered[start : start + batch]
            sql = f"INSERT INTO {table} ({columns}) VALUES {', '.join([row_sql] * len(chunk))} {conflict}"  # noqa: S608
            cursor.execute(sql, [value for row in chunk for value in row])
