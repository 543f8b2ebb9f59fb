"""A COPY finished on a helper thread while the request's thread builds the next rows in Python.

At the end of a COPY FROM the client flushes the rows still in its buffer, sends the end and
waits for the server to store them and update the table's indexes: for a 1,000-item batch's
decisions most of that COPY's wall time, with the process's Python idle. psycopg (its C
implementation) releases the GIL while it waits on the socket, so inside a `behind()` block
`copy_from(..., behind=True)` leaves that end to a short-lived thread, which touches only the
psycopg COPY object it is given (neither Django's connection nor any other cursor), and the
request's thread goes on with the Python that does not need the connection. The next use of
the connection joins the thread first (every statement Django runs inside the block, through an
execute wrapper; every statement of config.prepared's cursors, in their execute(); the next COPY
of copy_from; the block's end), so the server sees the same statements in the same order, in
the same transaction; the COPY's error is raised in the request's thread at that join, before any
later statement and in place of any error the Python in between raised. A COPY's errors are
Django's, as every other statement's (an IntegrityError of the decisions' unique key is the one
audit.pipeline retries). psycopg's connection lock,
held by the COPY until its end, keeps any other use of the connection waiting meanwhile.

PostgreSQL only (audit.apply opens the block for a write large enough to COPY); outside a
block, or with `behind=False`, copy_from is the plain `with cursor.copy(...)`."""

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import psycopg
from django.db import connection


class _Ending:
    """A COPY's end running on its helper thread; join() waits for it and re-raises its error."""

    def __init__(self, end: Callable[[], None], close: Callable[[], None], errors: Any) -> None:
        self._end = end
        self._close = close
        self._errors = errors  # Django's wrapper of this connection's errors
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = threading.Thread(
            target=self._run, name="copy-end", daemon=True
        )
        try:
            self._thread.start()
        except BaseException:
            # No thread to be had: the COPY ends here, now (left open, it would keep the
            # connection's lock and every later statement would wait for it for ever).
            self._thread = None
            self._run()

    def _run(self) -> None:
        try:
            self._end()
        except BaseException as error:  # re-raised in the request's thread by join()
            self._error = error

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
        self._close()  # the cursor, in the request's thread
        if (error := self._error) is not None:
            self._error = None
            with self._errors:
                raise error


class _Block:
    def __init__(self) -> None:
        self.ending: _Ending | None = None


_block: ContextVar[_Block | None] = ContextVar("copy_behind", default=None)


@contextlib.contextmanager
def behind() -> Iterator[None]:
    """Inside the block a COPY opened with `copy_from(..., behind=True)` ends on a helper
    thread; the block's end joins the last one (and raises its error)."""
    block = _Block()
    token = _block.set(block)
    try:
        with connection.execute_wrapper(_joined_first):
            yield
    finally:
        _block.reset(token)
        _join(block)


def joined() -> None:
    """Wait for the COPY still ending, if any, and raise its error: call before any other use
    of the connection inside a behind() block."""
    if (block := _block.get()) is not None:
        _join(block)


def _join(block: _Block) -> None:
    if (ending := block.ending) is not None:
        block.ending = None
        ending.join()


# Any: Django's execute wrapper protocol (the statement, its parameters, the wrapped call)
def _joined_first(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
    joined()
    return execute(sql, params, many, context)


@contextlib.contextmanager
def copy_from(sql: str, *, behind: bool = False) -> Iterator[psycopg.Copy]:
    """`COPY ... FROM STDIN` on the connection, the rows written by the caller's block, its
    errors Django's (psycopg's UniqueViolation an IntegrityError, as for any statement). With
    `behind`, inside a behind() block, the COPY's end runs on a helper thread once the caller's
    block is left without an error (an error ends it in this thread, as usual)."""
    joined()
    block = _block.get()
    errors = connection.wrap_database_errors
    cursor = connection.cursor()
    if not behind or block is None:
        with errors, cursor, cursor.cursor.copy(sql) as copy:
            yield copy
        return
    with errors:
        copying = cursor.cursor.copy(sql)
        try:
            copy = copying.__enter__()
        except BaseException:
            cursor.close()
            raise
        with contextlib.ExitStack() as stack:
            stack.callback(cursor.close)
            stack.push(copying)  # an error of the caller's block ends the COPY here, as usual
            yield copy
            stack.pop_all()
    block.ending = _Ending(lambda: copying.__exit__(None, None, None), cursor.close, errors)
