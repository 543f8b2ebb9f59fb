"""The threads of the webhook dispatcher, one set per process (made again after a prefork
worker forks): senders (one holder each, WEBHOOK_DISPATCH_THREADS), writers that claim ahead and
write outcomes (WEBHOOK_OUTCOME_WRITERS), and the test sends' own (WEBHOOK_TEST_THREADS). Each
thread keeps its own database connection between jobs."""

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import close_old_connections, connection

from webhooks import conf

logger = logging.getLogger("trustcal.webhooks")

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
inflight: set[Future[object]] = set()
holding: dict[str, str] = {}  # webhook id -> customer id, holders of this process
holding_lock = threading.Lock()


def send_pool() -> ThreadPoolExecutor:
    """One long-lived pool per process (made after a prefork worker forks), so the threads'
    database connections are reused between dispatches instead of opened each time."""
    global _pool, _pool_pid
    if _pool is None or _pool_pid != os.getpid():
        _pool = ThreadPoolExecutor(max_workers=conf.dispatch_threads(), thread_name_prefix="webhook-send")
        _pool_pid = os.getpid()
        inflight.clear()
        holding.clear()
    return _pool


_writers: ThreadPoolExecutor | None = None
_writers_pid = 0


def writer_pool() -> ThreadPoolExecutor:
    """Threads that claim ahead and write outcomes for the holders of this process
    (WEBHOOK_OUTCOME_WRITERS), each with its own database connection."""
    global _writers, _writers_pid
    if _writers is None or _writers_pid != os.getpid():
        _writers = ThreadPoolExecutor(max_workers=conf.outcome_writers(), thread_name_prefix="webhook-write")
        _writers_pid = os.getpid()
    return _writers


def in_writer[T](function: Callable[[], T]) -> T:
    """A writer thread: its own database connection, reused between jobs (CONN_MAX_AGE)."""
    close_old_connections()
    return function()


def send_pool_close() -> None:
    """Close every sender and writer thread's database connection and their pools (tests;
    worker shutdown)."""
    global _pool, _writers
    pool, _pool = _pool, None
    writers, _writers = _writers, None
    for each in (pool, writers):
        if each is not None:
            _threads_close(each)


def _threads_close(pool: ThreadPoolExecutor) -> None:
    size = pool._max_workers
    barrier = threading.Barrier(size)

    def close(_: int) -> None:
        # one call per thread, so each closes its own connection; a thread still sending
        # breaks the barrier, and its connection goes with the process
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=10)
        connection.close()

    list(pool.map(close, range(size)))
    pool.shutdown(wait=True)


_test_pool: ThreadPoolExecutor | None = None
_test_pool_pid = 0


def test_pool() -> ThreadPoolExecutor:
    """Test sends' own threads, per process (WEBHOOK_TEST_THREADS)."""
    global _test_pool, _test_pool_pid
    if _test_pool is None or _test_pool_pid != os.getpid():
        _test_pool = ThreadPoolExecutor(max_workers=conf.test_threads(), thread_name_prefix="webhook-test")
        _test_pool_pid = os.getpid()
    return _test_pool


def in_thread(function: Callable[..., None], **kwargs: str) -> None:
    """Run a service in a pool thread: its own (reused) database connection."""
    close_old_connections()
    try:
        function(**kwargs)
    except Exception:
        logger.exception("webhook background job failed: %s", getattr(function, "__name__", function))
