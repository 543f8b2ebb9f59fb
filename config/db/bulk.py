"""Bulk writes: inserts for the batch paths (COPY on PostgreSQL, bulk_create elsewhere) and
the one additive upsert of every counter table.

Django's bulk_create binds every value of a multi-row INSERT client-side; for 1,000 rows of
20 columns psycopg splits a 20,000-placeholder query and Django prepares each value (about
0.3 s per 1,000 decisions measured). COPY streams the rows instead."""

import contextlib
import datetime as dt
import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import psycopg
from django.db import connection, models
from django.db.backends.utils import CursorWrapper
from django.db.models import ForeignObjectRel

from config.db import prepared
from config.db.rows import AnyField, copy_row_of, preparers, row_of

COPY_FROM = 50  # rows from which COPY is cheaper than one multi-row INSERT


def bulk_insert(model: type[models.Model], objs: Sequence[models.Model], *, with_ids: bool = False) -> None:
    """Insert `objs` (all fields set except, with `with_ids`, an auto primary key, which is
    drawn from the table's sequence and set on each object).

    On PostgreSQL up to COPY_FROM rows go in one INSERT ... SELECT FROM unnest(one array per
    column) RETURNING the keys (insert_sent, then its keys read); more rows: the keys
    drawn by one statement, then one COPY. Elsewhere Django's bulk_create."""
    if not objs:
        return
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(objs, batch_size=500)
        return
    if len(objs) <= COPY_FROM:
        sent = insert_sent(model, objs, with_ids=with_ids)
        sent.keys_read()
        return
    meta = model._meta
    fields = list(meta.concrete_fields)
    with connection.cursor() as cursor:
        if with_ids:
            assert meta.pk is not None and meta.pk.column is not None
            cursor.execute(KEYS_SQL, [meta.db_table, meta.pk.column, len(objs)])
            for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
                obj.pk = pk
    qn = connection.ops.quote_name
    names = ", ".join(qn(str(field.column)) for field in fields)
    row = copy_row_of(model, fields)
    with copy_from(f"COPY {qn(meta.db_table)} ({names}) FROM STDIN") as copy:
        for obj in objs:
            copy.write_row(row(obj))
    _saved(objs)


class SentInsert:
    """An INSERT of the rows sent on the connection (in psycopg's pipeline mode its
    result is not waited for); keys_read() reads the keys it returned into the objects, then
    closes its cursor. Call it before reading the objects' keys."""

    def __init__(self, objs: Sequence[models.Model], cursor: CursorWrapper, with_ids: bool) -> None:
        self.objs = objs
        self.cursor = cursor
        self.with_ids = with_ids

    def keys_read(self) -> None:
        if self.with_ids:
            for obj, (pk,) in zip(self.objs, self.cursor.fetchall(), strict=True):
                obj.pk = pk
        self.cursor.close()


def insert_sent(model: type[models.Model], objs: Sequence[models.Model], *, with_ids: bool) -> SentInsert:
    """PostgreSQL: send one INSERT ... SELECT of the rows (one array per column), a prepared
    statement (config.db.prepared), RETURNING the keys with `with_ids`. Its text is compiled
    once per model: for up to COPY_FROM rows one statement beats drawing ids and then streaming
    a COPY (two); in pipeline mode, where no COPY can go, it sends any number (a large plan's
    events, audit.apply)."""
    meta = model._meta
    fields = [field for field in meta.concrete_fields if not (with_ids and field is meta.pk)]
    bound = prepared.cursor()
    row = row_of(fields, preparers(model))
    rows = [row(obj) for obj in objs]
    floats = _float_fields(model, with_ids)
    arrays = [
        array_param([None if value is None else float(value) for value in column])
        if is_float
        else array_param(list(column))
        for is_float, column in zip(floats, zip(*rows, strict=True), strict=True)
    ]
    bound.execute(_insert_sql(model, with_ids), arrays)
    _saved(objs)
    return SentInsert(objs, bound, with_ids)


@contextlib.contextmanager
def copy_from(sql: str) -> Iterator[psycopg.Copy]:
    """`COPY ... FROM STDIN` on Django's connection, its errors Django's (psycopg's
    UniqueViolation an IntegrityError, as for any statement): the caller writes the rows
    inside the block."""
    with connection.wrap_database_errors, connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        yield copy


# N new keys of a table's serial primary key. The sequence's name is looked up once (an
# InitPlan): pg_get_serial_sequence is stable, not immutable, so as nextval's own argument it ran
# once per key, catalog lookups each (1,000 keys: 2.6-7.3 ms of the server's time, 0.6 ms so).
KEYS_SQL = "SELECT nextval((SELECT pg_get_serial_sequence(%s, %s))::regclass) FROM generate_series(1, %s)"


_SPECIAL_FLOATS = {math.inf: "Infinity", -math.inf: "-Infinity"}


# Any: the elements of one column, of the column's type
def array_param(values: list[Any]) -> str | list[Any]:
    """One array parameter of a statement that casts it (`%s::bigint[]`): PostgreSQL's array
    literal, `{1,NULL,"a \\"b\\""}`, where every element is None, a str, bool, int, float, date
    or aware datetime, else the list itself for psycopg to dump. psycopg's array dumper looks
    for the elements' type in every list it is given: for the 40-odd one-element arrays of one
    POST /log that search was a fifth of the request's CPU (cProfile). The server parses the
    literal exactly: floats are written by repr (the shortest text that reads back as the same
    double), strings quoted with backslashes escaped (two str.replace: str.translate with a
    mapping ran per character in Python, 0.2 ms for one 300-character JSON text), dates and times
    in ISO 8601."""
    parts = []
    for value in values:
        kind = type(value)
        if value is None:
            parts.append("NULL")
        elif kind is str:
            parts.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif kind is bool:
            parts.append("t" if value else "f")
        elif kind is int:
            parts.append(str(value))
        elif kind is float:
            parts.append(repr(value) if math.isfinite(value) else _SPECIAL_FLOATS.get(value, "NaN"))
        elif kind is dt.date:
            parts.append(value.isoformat())
        elif kind is dt.datetime and value.tzinfo is not None:
            parts.append(f'"{value.isoformat()}"')
        else:
            return values
    return "{" + ",".join(parts) + "}"


def column_casts(model: type[models.Model], columns: Sequence[str]) -> list[str]:
    """Each column's PostgreSQL type as a cast (without a length)."""
    by_column = {f.column: f for f in model._meta.concrete_fields}
    return [f"::{column_type(by_column[c])}" for c in columns]


def _numbers(values: Sequence[Any]) -> str:  # Any: int, float or None
    """An int or float column: str and repr give the shortest text that reads back as the same
    value (PostgreSQL reads `inf` and `nan` too); None is NULL."""
    return "{" + ",".join(["NULL" if v is None else repr(v) for v in values]) + "}"


def _bools(values: Sequence[Any]) -> str:  # Any: bool or None
    return "{" + ",".join(["NULL" if v is None else "t" if v else "f" for v in values]) + "}"


def _texts(values: Sequence[Any]) -> str:  # Any: str or None
    return (
        "{"
        + ",".join(
            ["NULL" if v is None else '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values]
        )
        + "}"
    )


def _times(values: Sequence[Any]) -> str:  # Any: aware datetimes or None
    return "{" + ",".join(["NULL" if v is None else f'"{v.isoformat()}"' for v in values]) + "}"


def _integers(values: Sequence[Any]) -> str:  # Any: int (an IntEnum too) or None
    """Format code d: an IntEnum's number (its repr is its name), and a float refused, as COPY did."""
    return "{" + ",".join(["NULL" if v is None else f"{v:d}" for v in values]) + "}"


def _dates(values: Sequence[Any]) -> str:  # Any: dates or None
    return "{" + ",".join(["NULL" if v is None else v.isoformat() for v in values]) + "}"


# Any: each formatter takes one column's values, of that SQL type (staged_upsert's columns)
_STAGED_FORMATS: dict[str, Callable[[Sequence[Any]], str]] = {
    "integer": _integers,
    "smallint": _integers,
    "bigint": _integers,
    "double precision": _numbers,
    "boolean": _bools,
    "date": _dates,
    "text": _texts,
}


# Any: each formatter takes one column's values, of that column's type
@functools.cache
def _formats(model: type[models.Model], columns: tuple[str, ...]) -> list[Callable[[Sequence[Any]], str]]:
    by_column = {f.column: f for f in model._meta.concrete_fields}
    out: list[Callable[[Sequence[Any]], str]] = []
    for column in columns:
        f = by_column[column]
        if isinstance(f, models.FloatField | models.IntegerField):  # BigIntegerField, SmallIntegerField too
            out.append(_numbers)
        elif isinstance(f, models.BooleanField):
            out.append(_bools)
        elif isinstance(f, models.DateTimeField):
            out.append(_times)
        else:  # text, JSON given as its text, a text key
            out.append(_texts)
    return out


# Any: the rows' values, of their columns' types
def column_arrays(
    model: type[models.Model], columns: tuple[str, ...], rows: Sequence[Sequence[Any]]
) -> list[str]:
    """One array literal per column of `rows`, as array_param writes it but by the column's
    type, without looking at each value's (for the drift monitors' points and states: at 50
    monitors that look was the biggest part of writing them). With `%s::<type>[]` of
    column_casts."""
    return [
        fmt(values) for fmt, values in zip(_formats(model, columns), zip(*rows, strict=True), strict=True)
    ]


def _saved(objs: Sequence[models.Model]) -> None:
    alias = connection.alias  # a thread-local lookup each time it is read
    for obj in objs:
        obj._state.adding = False
        obj._state.db = alias


@functools.cache
def _float_fields(model: type[models.Model], with_ids: bool) -> tuple[bool, ...]:
    meta = model._meta
    fields = [field for field in meta.concrete_fields if not (with_ids and field is meta.pk)]
    return tuple(isinstance(field, models.FloatField) for field in fields)


@functools.cache
def _insert_sql(model: type[models.Model], with_ids: bool) -> str:
    """bulk_insert's statement for up to COPY_FROM rows: one array per column, unnested in
    order; the keys come back in the rows' order, as Django's bulk_create assumes too."""
    meta = model._meta
    qn = connection.ops.quote_name
    fields = [field for field in meta.concrete_fields if not (with_ids and field is meta.pk)]
    columns = ", ".join(qn(str(field.column)) for field in fields)
    arrays = ", ".join(f"%s::{column_type(field)}[]" for field in fields)
    source = f"SELECT * FROM unnest({arrays})"  # noqa: S608 (column types from the model)
    returning = f" RETURNING {qn(str(meta.pk.column))}" if with_ids and meta.pk is not None else ""
    return f"INSERT INTO {qn(meta.db_table)} ({columns}) {source}{returning}"


def column_type(field: AnyField | ForeignObjectRel) -> str:
    """A column's type without a length, for casts of bound values: a value too long for its
    column fails the insert instead of being cut by the cast."""
    return re.sub(r"\(.*\)", "", str(field.db_type(connection)))


def additive_upsert(
    model: type[models.Model],
    *,
    key: Sequence[str],
    values: Sequence[str],
    rows: Iterable[Sequence[Any]],  # Any: the columns' values, of mixed types
    add: Sequence[str] | None = None,
    batch: int = 500,
) -> None:
    """Insert rows of counters, or add them to the stored ones:
    `INSERT ... ON CONFLICT (key) DO UPDATE SET c = c + EXCLUDED.c`.

    `rows` hold the `key` columns then the `values` columns; `add` names the columns added on
    conflict (all of `values` by default), the others keep their stored value. The rows are
    written in key order, so concurrent writers lock shared rows in the same order and never
    deadlock. Column names come from the caller's code, never from input; values are bound.

    On PostgreSQL every row goes in one statement whose text does not depend on the number
    of rows (one array per column, unnested in order): psycopg parses a statement's text once
    and caches it, where a multi-row VALUES list was a new text of up to 78 KB to parse on
    every call; it is a prepared statement (config.db.prepared). Elsewhere one multi-row VALUES
    per `batch` rows."""
    ordered = sorted(rows, key=lambda row: tuple(row[: len(key)]))
    if not ordered:
        return
    columns = (*key, *values)
    added = tuple(values if add is None else add)
    if connection.vendor == "postgresql":
        floats = _float_columns(model, columns)  # an array holds one type: 0 and 0.5 as floats
        sql = _upsert_sql(model, tuple(key), columns, added, rows=0)
        arrays = [
            array_param(
                [None if value is None else float(value) for value in column] if is_float else list(column)
            )
            for column, is_float in zip(zip(*ordered, strict=True), floats, strict=True)
        ]
        with prepared.cursor() as bound:
            bound.execute(sql, arrays)
        return
    with connection.cursor() as cursor:
        for start in range(0, len(ordered), batch):
            chunk = ordered[start : start + batch]
            sql = _upsert_sql(model, tuple(key), columns, added, rows=len(chunk))
            cursor.execute(sql, [value for row in chunk for value in row])


@functools.lru_cache(maxsize=64)
def _float_columns(model: type[models.Model], columns: tuple[str, ...]) -> tuple[bool, ...]:
    return tuple(isinstance(model._meta.get_field(name), models.FloatField) for name in columns)


@functools.lru_cache(maxsize=64)
def _upsert_sql(
    model: type[models.Model],
    key: tuple[str, ...],
    columns: tuple[str, ...],
    add: tuple[str, ...],
    *,
    rows: int,
) -> str:
    """additive_upsert's statement: `rows` rows of VALUES, or (0) one array per column."""
    qn = connection.ops.quote_name
    table = qn(model._meta.db_table)
    names = ", ".join(qn(name) for name in columns)
    if rows:
        row_sql = "(" + ", ".join(["%s"] * len(columns)) + ")"
        source = f"VALUES {', '.join([row_sql] * rows)}"
    else:
        fields = [model._meta.get_field(name) for name in columns]
        arrays = ", ".join(f"%s::{column_type(field)}[]" for field in fields)
        source = f"SELECT * FROM unnest({arrays})"  # noqa: S608 (column types from the model)
    updates = ", ".join(f"{qn(name)} = t.{qn(name)} + EXCLUDED.{qn(name)}" for name in add)
    conflict = f"ON CONFLICT ({', '.join(qn(name) for name in key)}) " + (
        f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
    )
    return f"INSERT INTO {table} AS t ({names}) {source} {conflict}"


def staged_upsert(
    model: type[models.Model],
    *,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],  # Any: the columns' values, of mixed types
    key: Sequence[str],
    values: Sequence[str],
    select: str,
    params: Sequence[Any] = (),  # Any: SQL parameters of mixed types
    add: Sequence[str] | None = None,
) -> None:
    """The set-wise form of additive_upsert, PostgreSQL only: one `INSERT ... {select} ON
    CONFLICT (key) DO UPDATE SET c = c + EXCLUDED.c`, where `select` (bound with `params`) reads
    `rows` (one per decision or per change, `columns` as (name, SQL type)) as the relation
    `staged` and returns the `key` columns then the `values` columns, one row per key, in key
    order under the "C" collation (Python's order of strings, the order additive_upsert writes
    in, so writers of either kind lock shared rows in the same order). The rows go as one array
    per column, unnested (no staging table, no COPY: the statement is sent in pipeline mode,
    audit.apply, and its result is not waited for); Python builds no row per key: the grouping
    and the sums are the database's. A prepared statement (config.db.prepared). Table and
    column names come from the caller's code."""
    if not rows:
        return
    qn = connection.ops.quote_name
    arrays = ", ".join(f"%s::{sql_type}[]" for _, sql_type in columns)
    names = ", ".join(qn(name) for name, _ in columns)
    target = (*key, *values)
    added = tuple(values if add is None else add)
    updates = ", ".join(f"{qn(name)} = t.{qn(name)} + EXCLUDED.{qn(name)}" for name in added)
    insert = (
        f"WITH staged AS (SELECT * FROM unnest({arrays}) AS staged ({names})) "  # noqa: S608
        f"INSERT INTO {qn(model._meta.db_table)} AS t ({', '.join(qn(name) for name in target)}) {select} "
        f"ON CONFLICT ({', '.join(qn(name) for name in key)}) DO UPDATE SET {updates}"
    )
    formats = [_STAGED_FORMATS[sql_type] for _, sql_type in columns]
    literals = [fmt(column) for fmt, column in zip(formats, zip(*rows, strict=True), strict=True)]
    with prepared.cursor() as bound:
        bound.execute(insert, [*literals, *params])
