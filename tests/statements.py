"""Counting what a request costs the database: statements and round trips.

On PostgreSQL both are read from libpq's own protocol trace of the test's connection (PQtrace),
so they count what went over the wire, whatever layer sent it (Django's ORM, a raw cursor,
psycopg's pipeline mode, COPY), transaction control included:

- a statement is an Execute message of the extended protocol or a simple-protocol Query;
- a round trip is a point where the client asks the server for its answers and then waits for
  them: a Sync, a Flush, a simple Query, or the CopyDone that ends a COPY's data (psycopg sends
  a Flush right after a Sync when it leaves pipeline mode; the pair is one wait).

On SQLite there are no round trips; statements are Django's captured queries (with BEGIN and
COMMIT, which Django logs too)."""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import connection
from django.test.utils import CaptureQueriesContext

_WAITS = {"Sync", "Flush", "Query", "CopyDone"}


@dataclass
class Count:
    statements: int = 0
    round_trips: int = 0
    texts: list[str] = field(default_factory=list)

    def listing(self) -> str:
        return "\n".join(f"  {n}. {text[:160]}" for n, text in enumerate(self.texts, 1))


def _from_trace(trace: str) -> Count:
    count = Count()
    previous = ""
    parsed = ""  # the last Parse's statement text, shown for the Execute that runs it
    for line in trace.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or parts[0] != "F":
            continue
        message, rest = parts[2], "\t".join(parts[3:]).strip()
        if message == "Parse":
            parsed = rest
        elif message == "Bind" and rest.split(" ")[1:2] != ['""']:  # a prepared statement, by name
            parsed = f"(prepared statement {rest.split(' ')[1]})"
        elif message == "Execute":
            count.statements += 1
            count.texts.append(parsed)
        elif message == "Query":
            count.statements += 1
            count.texts.append(rest)
        if message in _WAITS and not (message == "Flush" and previous == "Sync"):
            count.round_trips += 1
        previous = message
    return count


@contextmanager
def counted() -> Iterator[Count]:
    """Count the statements (and, on PostgreSQL, round trips) run on this thread's connection
    inside the block; the figures are filled in when the block ends."""
    count = Count()
    if connection.vendor != "postgresql":
        with CaptureQueriesContext(connection) as captured:
            yield count
        count.texts = [q["sql"] for q in captured.captured_queries]
        count.statements = len(count.texts)
        return
    from psycopg import pq

    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    fd, path = tempfile.mkstemp(prefix="trustcal-trace-")
    try:
        pgconn.trace(fd)
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield count
        finally:
            pgconn.untrace()
        with open(path, encoding="utf-8", errors="replace") as trace:
            found = _from_trace(trace.read())
        count.statements, count.round_trips, count.texts = found.statements, found.round_trips, found.texts
    finally:
        os.close(fd)
        os.unlink(path)


def assert_within(what: str, count: Count, *, statements: int, round_trips: int | None = None) -> None:
    """Fail, naming the figure and the budget it exceeded, when `count` is over budget."""
    problems = []
    if count.statements > statements:
        problems.append(f"{count.statements} statements, over its budget of {statements}")
    if round_trips is not None and connection.vendor == "postgresql" and count.round_trips > round_trips:
        problems.append(f"{count.round_trips} round trips, over its budget of {round_trips}")
    assert not problems, f"{what}: {'; '.join(problems)}. Statements:\n{count.listing()}"
