"""Keep-alive connections of one dispatcher process, kept per webhook and checked address.

A connection is filed under (webhook id, scheme, host, port, address): the host is the name
used for the Host header and TLS SNI, the address the URL check (docs/reference/webhooks.md, "URL safety") returned when the connection
was opened. The URL is still resolved and checked before every attempt (url_safety.resolve);
an idle connection is handed out only for the same webhook and the same freshly checked
address, never for a URL that is now refused (attempt.send drops the webhook's connections
then). An idle connection is closed after WEBHOOK_KEEPALIVE_SECONDS, or at once when the
receiver has closed it or sent anything unasked (it is readable while idle)."""

import http.client
import os
import select
import threading
import time
from typing import NamedTuple

from webhooks import conf


class Key(NamedTuple):
    webhook_id: str
    scheme: str
    host: str
    port: int
    address: str


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """True when an idle connection is closed or has data we did not ask for."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


class Pool:
    """At most one idle connection per key; taken out while in use, so never shared."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[Key, tuple[http.client.HTTPConnection, float]] = {}
        self._sweeper: threading.Thread | None = None

    def take(self, key: Key) -> http.client.HTTPConnection | None:
        with self._lock:
            entry = self._idle.pop(key, None)
        if entry is None:
            return None
        conn, since = entry
        if time.monotonic() - since > conf.keepalive_seconds() or _dropped(conn):
            conn.close()
            return None
        return conn

    def give(self, key: Key, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            previous = self._idle.pop(key, None)
            self._idle[key] = (conn, time.monotonic())
            if self._sweeper is None:
                self._sweeper = threading.Thread(
                    target=self._sweep_forever, name="webhook-keepalive", daemon=True
                )
                self._sweeper.start()
        if previous is not None:
            previous[0].close()

    def drop(self, webhook_id: str) -> None:
        """Close the webhook's idle connections (its URL was just refused)."""
        with self._lock:
            gone = [key for key in self._idle if key.webhook_id == webhook_id]
            entries = [self._idle.pop(key) for key in gone]
        for conn, _ in entries:
            conn.close()

    def sweep(self, *, everything: bool = False) -> int:
        """Close the connections idle longer than the limit (all of them with `everything`)."""
        limit = conf.keepalive_seconds()
        now = time.monotonic()
        with self._lock:
            old = [key for key, (_, since) in self._idle.items() if everything or now - since > limit]
            entries = [self._idle.pop(key) for key in old]
        for conn, _ in entries:
            conn.close()
        return len(entries)

    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def _sweep_forever(self) -> None:
        while True:
            time.sleep(max(0.2, conf.keepalive_seconds()))
            self.sweep()


_pools: dict[int, Pool] = {}
_pools_lock = threading.Lock()


def pool() -> Pool:
    """This process's pool (a prefork child gets its own, never its parent's sockets)."""
    pid = os.getpid()
    with _pools_lock:
        current = _pools.get(pid)
        if current is None:
            _pools.clear()
            current = _pools[pid] = Pool()
        return current
