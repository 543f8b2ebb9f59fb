"""The cyclic garbage collector held off while a large write builds its rows.

A 1,000-item POST /log/batch keeps tens of thousands of container objects alive until it
commits (parsed bodies, validated items, decision and entry rows, their COPY rows). Each of
them counts towards the collector's thresholds, so one batch ran hundreds of young
collections and, every few batches, a full one over the whole process (Django, the
libraries, every module's objects): about a sixth of the batch's CPU where the process has
not frozen what it loaded, and still about a sixteenth of it, and a sixth of its wall time,
in a web process, which has (config/wsgi.py; bench/README.md, the pairs). The
rows are freed by reference counting when the request ends; none of them needs the cyclic
collector while it is alive. So the collector is paused while any thread of the process is
inside `collector_paused()`, and runs again as usual once the last one leaves (a collection
is then due by the counts and runs on the next allocation, over what is left). Should
batches overlap without end in one process, a block that leaves while others are still
inside collects the young objects once their count passes _YOUNG_BOUND, so cyclic garbage
stays bounded."""

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_inside = 0
_was_enabled = False
_YOUNG_BOUND = 200_000  # objects allocated (and not yet freed) since the last collection


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block (process-wide, counted across threads); left as it
    was found (a process that turned it off keeps it off)."""
    global _inside, _was_enabled
    with _lock:
        if _inside == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _was_enabled:
                gc.enable()
            elif _inside and _was_enabled and gc.get_count()[0] > _YOUNG_BOUND:
                gc.collect(1)
