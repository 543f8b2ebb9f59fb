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
The cursor is Django's own wrapper (`CursorWrapper`, or `CursorDebugWrapper` when queries are
logged) around that psycopg cursor: Django's execute wrappers (an APM's hooks) see every
statement, the tests' CaptureQueriesContext and DEBUG log it, and its errors are Django's (an
IntegrityError stays one)."""

from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from psycopg import abc


class PreparingCursor(psycopg.Cursor[Any]):  # Any: rows of the statement's columns
    """psycopg's server-binding cursor that prepares every statement it runs; with `binary`
    the values come back in PostgreSQL's binary format (no number printed as text by the
    server and parsed again by psycopg)."""

    binary = False

    def execute(
        self,
        query: abc.Query,
        params: abc.Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> "PreparingCursor":
        # the statements here are plain text with parameters, never psycopg's Template overload
        return super().execute(query, params, prepare=True, binary=self.binary if binary is None else binary)  # type: ignore[arg-type]


def cursor(*, binary: bool = False) -> CursorWrapper:
    """Django's cursor wrapper around a PreparingCursor on this thread's connection
    (PostgreSQL only); close it, or use it as a context manager."""
    db = connections[DEFAULT_DB_ALIAS]  # this thread's, as `connection` would give
    db.ensure_connection()
    raw = PreparingCursor(db.connection)
    raw.binary = binary
    return CursorDebugWrapper(raw, db) if db.queries_logged else CursorWrapper(raw, db)
