"""The limits of a render (docs/reference/limits.md, "Exports"): wall time and resident memory,
either one interrupting the render with RenderLimitExceeded, whose message is the job's error."""

import contextlib
import os
import resource
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from django.conf import settings


class RenderLimitExceeded(Exception):
    """A render went over its time or memory limit; the message is the job's error."""


MEMORY_POLL_SECONDS = 0.2


def resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


@contextlib.contextmanager
def render_limits() -> Iterator[None]:
    """The render's limits (docs/reference/limits.md, "Exports"): EXPORT_RENDER_SECONDS of
    wall time, and EXPORT_RENDER_MEMORY_MB of resident memory on top of what the process held
    when the render began (checked every MEMORY_POLL_SECONDS by a watcher thread). Either one
    interrupts the render with SIGALRM, whose handler runs in the worker's main thread (a
    prefork worker runs each task there) and raises RenderLimitExceeded. An address-space
    rlimit is not used: native libraries (OpenBLAS) abort instead of raising MemoryError."""
    seconds = settings.EXPORT_RENDER_SECONDS
    megabytes = settings.EXPORT_RENDER_MEMORY_MB
    if threading.current_thread() is not threading.main_thread() or not (seconds > 0 or megabytes > 0):
        yield
        return
    reason: list[str] = []

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        # Kept as the reason too: the alarm can land inside code that replaces it with an
        # error of its own (a transaction's end, an import), and that error is still the limit.
        if not reason:
            reason.append(f"The render went over its time limit of {seconds:g} s.")
        raise RenderLimitExceeded(reason[0])

    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    if seconds > 0:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    done = threading.Event()
    budget = resident_bytes() + megabytes * 1024 * 1024

    def watch_memory() -> None:
        while not done.wait(MEMORY_POLL_SECONDS):
            if resident_bytes() > budget:
                reason.append(f"The render went over its memory limit of {megabytes} MB.")
                signal.setitimer(signal.ITIMER_REAL, 0)
                os.kill(os.getpid(), signal.SIGALRM)
                return

    watcher = threading.Thread(target=watch_memory, name="render-memory", daemon=True)
    if megabytes > 0:
        watcher.start()
    try:
        try:
            yield
        except RenderLimitExceeded:
            raise
        except Exception as exc:
            # The alarm can land inside code that turns it into another error (a C
            # extension's import answers ImportError "initialization failed"; a transaction's
            # end answers that the connection is still in a transaction): once the limit has
            # fired, that is why the render stopped.
            if reason:
                raise RenderLimitExceeded(reason[0]) from exc
            raise
        # The limit fired but the code it interrupted swallowed the exception (a library's
        # broad `except Exception`) and the render went on: it still went over its limit.
        if reason:
            raise RenderLimitExceeded(reason[0])
        # A render shorter than the watcher's poll is judged once at its end, so the limit
        # does not depend on when the watcher last looked.
        if megabytes > 0 and not reason and resident_bytes() > budget:
            raise RenderLimitExceeded(f"The render went over its memory limit of {megabytes} MB.")
    finally:
        done.set()
        signal.setitimer(signal.ITIMER_REAL, 0)
        if watcher.is_alive():
            watcher.join()
        signal.signal(signal.SIGALRM, previous_handler)
