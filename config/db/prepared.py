"""Prepared statements for the hot write path on PostgreSQL.

Django's psycopg backend binds parameters client-side (psycopg's ClientCursor): every
execution sends the statement with its values written in as literals, and the server parses
and plans that text again each time (0.4-0.6 ms of the server's CPU for the calibration and
statistics upserts, about as much as running them). `cursor()` gives a psycopg cursor that
binds on the server instead, on the same connection and in the same transaction, and has
psycopg prepare each statement it runs (Django turns psycopg's automatic preparing off): the
first execution on a connection prepares it, the later ones send only its name and the values.
The hot statements have fixed texts (one array per column, never a list of placeholders that
grows with the rows), so each is prepared once per connection (psycopg keeps the last 100 per
connection; a pooler in front of PostgreSQL must keep prepared statements per client, as
PgBouncer does in transaction mode from 1.21 with `max_prepared_statements`).

Only statements written for it use it: a server-bound parameter has a type, so every array is
cast (`%s::text[]`) and no placeholder stands where PostgreSQL cannot take a parameter.
Statements run through it are logged like Django's own when queries are logged (tests'
CaptureQueriesContext, DEBUG), and its errors are Django's (an IntegrityError stays one)."""

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections


class BoundCursor:
    """A server-binding psycopg cursor whose execute() is logged and whose errors are Django's.

    It holds this thread's connection wrapper itself: every `connection.x` goes through
    Django's proxy and a thread-local lookup, several times per statement otherwise."""

    def __init__(self) -> None:
        db = connections[DEFAULT_DB_ALIAS]  # this thread's, as `connection` would give
        db.ensure_connection()
        self._db = db
        self._errors = db.wrap_database_errors
        self._cursor: psycopg.Cursor[Any] = psycopg.Cursor(db.connection)

    # Any: SQL parameters of mixed types
    def execute(self, sql: str, params: Sequence[Any], *, binary: bool = False) -> None:
        """Run `sql`; with `binary`, the values come back in PostgreSQL's binary format (no
        number is printed as text by the server and parsed again by psycopg)."""
        started = time.monotonic()
        try:
            with self._errors:
                self._cursor.execute(sql, params, prepare=True, binary=binary)
        finally:
            if self._db.queries_logged:
                self._db.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})

    # Any: a row's values, of the columns' types
    def fetchone(self) -> tuple[Any, ...] | None:
        with self._errors:
            return self._cursor.fetchone()

    # Any: rows' values, of the columns' types
    def fetchall(self) -> list[tuple[Any, ...]]:
        with self._errors:
            return self._cursor.fetchall()

    def close(self) -> None:
        self._cursor.close()


@contextmanager
def cursor() -> Iterator[BoundCursor]:
    """A BoundCursor on this thread's connection (PostgreSQL only), closed when the block ends."""
    bound = BoundCursor()
    try:
        yield bound
    finally:
        bound.close()
