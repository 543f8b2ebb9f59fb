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

import functools
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections


class BoundCursor:
    """A server-binding psycopg cursor whose execute() is logged and whose errors are Django's.

    It holds this thread's connection wrapper itself: every `connection.x` goes through
    Django's proxy and a thread-local lookup, several times per statement otherwise."""

    def __init__(self, *, raw: bool = False) -> None:
        """With `raw`, the statements' placeholders are PostgreSQL's own ($1, $2, ...), which
        psycopg sends as they are (psycopg.RawCursor) where it parses a text of `%s` on every
        execution once the text is longer than 4,096 bytes or has more than 50 of them."""
        db = connections[DEFAULT_DB_ALIAS]  # this thread's, as `connection` would give
        db.ensure_connection()
        self._db = db
        self._errors = db.wrap_database_errors
        cls = psycopg.RawCursor if raw else psycopg.Cursor
        self._cursor: psycopg.Cursor[Any] = cls(db.connection)

    def execute(self, sql: str, params: Sequence[Any], *, binary: bool = False) -> None:
        """Run `sql`; with `binary`, the values come back in PostgreSQL's binary format (no
        number is printed as text by the server and parsed again by psycopg)."""
        if (pending := _combining.get()) is not None:
            pending.flush()  # the writes held before this statement go first, in their order
        started = time.monotonic()
        try:
            with self._errors:
                self._cursor.execute(sql, params, prepare=True, binary=binary)  # type: ignore[arg-type]  # fixed texts
        finally:
            if self._db.queries_logged:
                self._db.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})

    def fetchone(self) -> tuple[Any, ...] | None:
        with self._errors:
            return self._cursor.fetchone()

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


# How a held write's text is built: None alone; "" the first of a combined statement; else the
# name of the one it follows, whose rows it counts first (see Combined).
type Build = Callable[[str | None], str]
# Any: a statement's rows
type Rows = Callable[[], list[tuple[Any, ...]]]


class Combined:
    """Writes held to be sent as one statement (PostgreSQL; see `combined`).

    Held writes `s0`, `s1`, ... become the data-modifying CTEs of one `WITH` statement, each
    reading the end of the one before it (`WHERE (SELECT count(*) FROM s0) >= 0` in its source)
    so the server runs them to completion in the order they were held, as separate statements
    would: the order of effects (docs/reference/decisions.md, "Order of effects") and the order
    writers lock shared rows in. One write at most returns rows to its caller; the statement's
    own rows are that write's. A single held write is sent as it is."""

    def __init__(self) -> None:
        # Any: each write's parameters, of mixed types
        self._held: list[tuple[Build, list[Any], bool]] = []
        self._sent: list[BoundCursor] = []  # the statement of the writes held now, once sent
        self._targets: set[object] = set()

    # Any: the write's parameters
    def add(self, build: Build, params: list[Any], *, target: object, returns: bool = False) -> Rows:
        """Hold a write to `target` (its table; its text built for where it lands by `build`);
        the function returned gives its rows (with `returns`), sending the held writes first
        if they were not. The writes held before go first when one of them writes to the same
        table (the CTEs of one statement do not see each other's rows) or returns rows too."""
        if target in self._targets or (returns and any(wanted for _, _, wanted in self._held)):
            self.flush()
        self._held.append((build, params, returns))
        self._targets.add(target)
        sent = self._sent

        def rows() -> list[tuple[Any, ...]]:
            if not sent:
                self.flush()
            try:
                return sent[0].fetchall() if returns else []
            finally:
                sent[0].close()

        return rows

    def flush(self) -> None:
        """Send the held writes (none: nothing), as one statement."""
        held, self._held = self._held, []
        sent, self._sent = self._sent, []
        self._targets = set()
        if not held:
            return
        if len(held) == 1:
            sql = held[0][0](None)
        else:
            ctes = [build("" if at == 0 else f"s{at - 1}") for at, (build, _, _) in enumerate(held)]
            wanted = next((at for at, (_, _, returns) in enumerate(held) if returns), None)
            # the CTEs' names are numbers, their texts the writers' own: no input
            last = f"* FROM s{wanted}" if wanted is not None else f"count(*) FROM s{len(held) - 1}"
            sql = "WITH " + ", ".join(f"s{at} AS ({cte})" for at, cte in enumerate(ctes)) + " SELECT " + last
        token = _combining.set(None)  # its own execute must not flush again
        try:
            bound = BoundCursor(raw=True)
            bound.execute(_numbered(sql), [value for _, params, _ in held for value in params])
        finally:
            _combining.reset(token)
        sent.append(bound)
        if not any(returns for _, _, returns in held):
            bound.close()


@functools.lru_cache(maxsize=64)
def _numbered(sql: str) -> str:
    """The text with its `%s` placeholders numbered as PostgreSQL's ($1, $2, ...); the held
    writes' texts have no other `%`."""
    parts = sql.split("%s")
    assert all("%" not in part for part in parts), "a held write's text has only %s placeholders"
    return "".join(f"{part}${at}" for at, part in enumerate(parts[:-1], 1)) + parts[-1]


_combining: ContextVar[Combined | None] = ContextVar("combining", default=None)


# Any: the write's parameters
def write_sent(build: Build, params: list[Any], *, target: object, returns: bool = False) -> Rows:
    """Send a write to `target` (its table; its text `build(None)`), or inside `combined`
    hold it; the function returned reads its rows (with `returns`: call it once) and closes
    its cursor."""
    if (pending := _combining.get()) is not None:
        return pending.add(build, params, target=target, returns=returns)
    bound = BoundCursor()
    bound.execute(build(None), params)
    if not returns:
        bound.close()

    def rows() -> list[tuple[Any, ...]]:
        try:
            return bound.fetchall() if returns else []
        finally:
            bound.close()

    return rows


def after(previous: str | None) -> str:
    """What a held write's source ends with: a wait for the end of the write before it."""
    return f" WHERE (SELECT count(*) FROM {previous}) >= 0" if previous else ""  # noqa: S608 - a CTE's name


@contextmanager
def combined(enabled: bool = True) -> Iterator[None]:
    """Inside the block (on PostgreSQL, in pipeline mode: nothing waits for the held writes'
    results inside it), the writes that take part (config.bulk: bulk_insert of a few rows,
    additive_upsert) are held, and sent as one statement before any other statement (a
    BoundCursor's or Django's) or when the block ends: one bind and executor start on the
    server, one statement of psycopg's, where each write was one."""
    if not enabled:
        yield
        return
    pending = Combined()
    token = _combining.set(pending)
    db = connections[DEFAULT_DB_ALIAS]

    def flushed(execute, sql, params, many, context):  # type: ignore[no-untyped-def]  # Django's wrapper API
        pending.flush()
        return execute(sql, params, many, context)

    try:
        with db.execute_wrapper(flushed):
            yield
        pending.flush()
    finally:
        _combining.reset(token)
