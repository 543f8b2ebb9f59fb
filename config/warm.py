"""A web worker's threads connected before its first request (gunicorn.conf.py calls
`threads_warm` in each gthread worker). Django's database connection is per thread, and so is
the first use of the Redis client's pool: without this the first request of each thread opened
both while the requests behind it queued (bench/README.md, The /calibrate tail). Connecting is
all it does; it reads and writes nothing. A database or Redis that is down now is not this
code's to report: the worker starts anyway and its requests meet the failure as they would."""

import contextlib
import threading
from concurrent.futures import Executor
from concurrent.futures import TimeoutError as FutureTimeout

import redis
from django.db import DatabaseError, InterfaceError, connection

from config.redis import get_redis

WAIT_SECONDS = 10.0


def _connect(barrier: threading.Barrier) -> None:
    try:
        barrier.wait(WAIT_SECONDS)  # every thread of the pool holds one task, so each connects
    except threading.BrokenBarrierError:
        return
    with contextlib.suppress(DatabaseError, InterfaceError):
        connection.ensure_connection()
    client = get_redis()
    if client is not None:
        with contextlib.suppress(redis.RedisError):
            client.ping()


def threads_warm(pool: Executor, threads: int) -> None:
    """Open this process's database and Redis connections on each of the pool's `threads`
    threads, waiting at most WAIT_SECONDS."""
    barrier = threading.Barrier(threads)
    tasks = [pool.submit(_connect, barrier) for _ in range(threads)]
    for task in tasks:
        try:
            task.result(WAIT_SECONDS * 2)
        except FutureTimeout:
            barrier.abort()
            return
