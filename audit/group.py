"""Group commit: concurrent single decision writes (POST /log, POST /calibrate) of one customer
in one process are planned and committed together, in one transaction, by one of them.

Each customer's chain serialises its writers on the chain head until commit, and a commit waits
for the disk (synchronous_commit stays on). One request at a time therefore costs one disk flush
per decision. Here the first request of a customer leads: it takes every request of that
customer waiting in this process, writes them as one plan (in arrival order) and commits once;
the others wait for that commit and answer with their own result (their own sequence and hash).
Requests arriving meanwhile queue for the next group, led by the first of them. A request alone
is a group of one and waits for nothing.

- Only validated items join; a request that fails validation never reaches a group.
- If a group's transaction fails with an error, every item of it is written again alone (each
  in its own transaction), so one item that hits a database error fails only its own request.
  A failure of the group itself (its database connection lost) is not retried item by item:
  every request of the group answers 503, saying its write may not have been committed.
- A request waits for its group at most TRUSTCAL_DECISION_GROUP_WAIT_SECONDS: then it answers
  503, having withdrawn itself when no group had taken it yet (nothing of it is stored), or
  saying that the group writing it may still commit it (send it again: the same decision_id
  is a replay).
- A caller already inside a transaction (its write must commit or roll back with the caller's
  work) writes alone, on its own connection.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from audit.exceptions import GroupUnavailable
from audit.inputs import Item
from audit.plan import ItemResult
from keys.models import Customer

Writer = Callable[..., list[ItemResult]]


@dataclass
class _Request:
    item: Item
    source: str
    done: threading.Event = field(default_factory=threading.Event)
    lead: bool = False
    result: ItemResult | None = None
    error: BaseException | None = None


@dataclass
class GroupStats:
    """What groups formed in this process (read by the tests and the benchmark)."""

    groups: int = 0
    items: int = 0
    largest: int = 0
    retried: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"groups": self.groups, "items": self.items, "largest": self.largest, "retried": self.retried}


class GroupCommit:
    def __init__(self, writer: Writer) -> None:
        self._writer = writer
        self._lock = threading.Lock()
        self._queues: dict[str, list[_Request]] = {}
        self._leading: set[str] = set()
        self.stats = GroupStats()

    def write(self, *, customer: Customer, item: Item, source: str) -> ItemResult:
        """Write one validated item; returns its result once it is committed."""
        if not getattr(settings, "DECISION_GROUP_COMMIT", True) or connection.in_atomic_block:
            return self._writer(customer=customer, items=[item], bodies=[item.data], sources=[source])[0]
        request = _Request(item, source)
        key = customer.pk
        with self._lock:
            self._queues.setdefault(key, []).append(request)
            if key not in self._leading:
                self._leading.add(key)
                request.lead = True
        if not request.lead and not request.done.wait(_wait_seconds()):
            self._give_up(key, request)
        if request.lead:  # the first of its customer, or handed the lead by the previous leader
            self._lead(customer)
        if request.error is not None:
            raise request.error
        if request.result is None:  # every path above sets one of the two
            raise RuntimeError("a grouped write ended with neither a result nor an error")
        return request.result

    def _give_up(self, key: str, request: _Request) -> None:
        """A follower whose wait ran out: withdrawn while still queued (nothing stored), or
        told that the group holding it may yet commit it. Handed the lead meanwhile, it leads."""
        with self._lock:
            if request.lead:
                return
            queued = self._queues.get(key, [])
            if request in queued:
                queued.remove(request)
                request.error = GroupUnavailable(
                    f"This request waited {_wait_seconds():g} s for the earlier writes of its customer in"
                    " this process and was withdrawn: nothing of it was stored. Send it again."
                )
                return
        request.error = GroupUnavailable(
            f"The write of this request's group did not commit within {_wait_seconds():g} s; it may"
            " still be committed. Send it again: the same decision_id answers as a replay once stored."
        )

    def _lead(self, customer: Customer) -> None:
        key = customer.pk
        with self._lock:
            group = self._queues.pop(key, [])
        limit = max(1, int(getattr(settings, "DECISION_GROUP_MAX", 200)))
        group, rest = group[:limit], group[limit:]
        try:
            self._write_group(customer, group)
        finally:
            with self._lock:
                queued = rest + self._queues.pop(key, [])
                if queued:
                    self._queues[key] = queued
                    queued[0].lead = True
                    queued[0].done.set()
                else:
                    self._leading.discard(key)
            for request in group:
                request.done.set()

    def _write_group(self, customer: Customer, group: list[_Request]) -> None:
        with self._lock:
            self.stats.groups += 1
            self.stats.items += len(group)
            self.stats.largest = max(self.stats.largest, len(group))
        try:
            results = self._writer(
                customer=customer,
                items=[r.item for r in group],
                bodies=[r.item.data for r in group],
                sources=[r.source for r in group],
            )
        except Exception as exc:  # re-raised by each request's own thread (write())
            if len(group) == 1:
                group[0].error = exc
                return
            if _connection_lost(exc):  # every item would meet it again: not retried one by one
                lost = GroupUnavailable(
                    "The database connection was lost while this request's group was written; it may"
                    " not have been committed. Send it again: the same decision_id answers as a"
                    " replay once stored."
                )
                for request in group:
                    request.error = lost
                return
            with self._lock:
                self.stats.retried += 1
            for request in group:  # one item's database error fails only that item
                write_alone(request, self._writer, customer)
            return
        for request, result in zip(group, results, strict=True):
            request.result = result


def _wait_seconds() -> float:
    return float(getattr(settings, "DECISION_GROUP_WAIT_SECONDS", 30.0))


# SQLSTATEs of a lost session: class 08 (connection exception) and the server ending it
# (admin_shutdown, crash_shutdown, cannot_connect_now).
_LOST_SQLSTATES = ("57P01", "57P02", "57P03")


def _connection_lost(exc: Exception) -> bool:
    """A failure of the group's connection itself rather than of one of its items."""
    if isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    if sqlstate:
        return sqlstate.startswith("08") or sqlstate in _LOST_SQLSTATES
    if exc.__cause__ is not None and type(exc.__cause__).__name__ == "OperationalError":
        # The driver's own error with no SQLSTATE is the client library's: the session failed
        # (an error met where a pipeline ends, "consuming input failed: server closed the
        # connection", leaves the driver's connection looking open).
        return True
    raw = connection.connection  # no SQLSTATE: lost when the driver's connection is closed or broken
    return raw is None or bool(getattr(raw, "closed", False)) or bool(getattr(raw, "broken", False))


def write_alone(request: _Request, writer: Writer, customer: Customer) -> None:
    """Write one request's item alone; its error (if any) is raised in its own thread."""
    try:
        request.result = writer(
            customer=customer, items=[request.item], bodies=[request.item.data], sources=[request.source]
        )[0]
    except Exception as exc:  # re-raised by the request's own thread (write())
        request.error = exc
